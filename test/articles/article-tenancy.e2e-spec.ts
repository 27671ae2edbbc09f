import { ArticlesRepository } from '../../src/articles/articles.repository.js';
import { createTenant, MISSING_ID, newKey, type Tenant, withRole } from '../support/fixtures.js';
import { callOk, callTool } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { sql } from './article-helpers.js';

/** The calls that take an article id, with arguments that would succeed on an article of the caller's project. */
const CALLS: [string, (id: string) => Record<string, unknown>][] = [
  ['get_article', (id) => ({ id })],
  ['update_article', (id) => ({ id, version: 1, title: 'Hijacked' })],
  ['publish_article', (id) => ({ id })],
  ['publish_article', (id) => ({ id, published_at: '2099-01-01T00:00:00Z' })],
  ['delete_article', (id) => ({ id })],
];

describe('article ids outside the caller’s reach behave exactly like ids that do not exist', () => {
  let t: TestApp;
  let owner: Tenant;
  let stranger: Tenant;
  let narrowKey: string;
  let foreign: { id: string; handle: string };
  let unreachable: { id: string; handle: string };

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createTenant(t, { projects: 2 });
    stranger = await createTenant(t);
    // A key of the owner's account that reaches only the first project.
    narrowKey = (await newKey(t, owner.accountId, withRole([owner.projectIds[0]], 'owner'))).key;
    foreign = await callOk(t, owner.key, 'create_article', { project_id: owner.projectIds[0], title: 'Not yours', handle: 'not-yours' });
    unreachable = await callOk(t, owner.key, 'create_article', { project_id: owner.projectIds[1], title: 'Not here', handle: 'not-here' });
  });
  afterAll(async () => {
    await t.close();
  });

  /** The answer with the id replaced, so answers about different ids compare equal. */
  async function answer(key: string, tool: string, args: Record<string, unknown>, id: string) {
    const out = await callTool(t, key, tool, args);
    return JSON.parse(JSON.stringify(out).split(id).join('<id>'));
  }

  it.each(CALLS)('%s: another account’s article id', async (tool, args) => {
    const unknown = await answer(stranger.key, tool, args(MISSING_ID), MISSING_ID);
    expect(unknown).toEqual({ status: 200, isError: true, json: { error: { code: 'not_found', message: 'No article with id "<id>" in this project.' } } });
    expect(await answer(stranger.key, tool, args(foreign.id), foreign.id)).toEqual(unknown);
  });

  it.each(CALLS)('%s: an article id of a project the credential does not reach', async (tool, args) => {
    const unknown = await answer(narrowKey, tool, args(MISSING_ID), MISSING_ID);
    expect(await answer(narrowKey, tool, args(unreachable.id), unreachable.id)).toEqual(unknown);
  });

  it.each(CALLS)('%s: an id that is not a UUID', async (tool, args) => {
    const unknown = await answer(stranger.key, tool, args(MISSING_ID), MISSING_ID);
    expect(await answer(stranger.key, tool, args('not-a-uuid'), 'not-a-uuid')).toEqual(unknown);
  });

  it('get_article by the handle of another account’s article is not_found like an unknown handle', async () => {
    const unknown = await answer(stranger.key, 'get_article', { handle: 'no-such-handle' }, 'no-such-handle');
    expect(await answer(stranger.key, 'get_article', { handle: foreign.handle }, foreign.handle)).toEqual(unknown);
    expect(await answer(narrowKey, 'get_article', { handle: unreachable.handle }, unreachable.handle)).toEqual(unknown);
  });

  it('a handle is unique per project, not across accounts or projects', async () => {
    expect((await callOk(t, stranger.key, 'create_article', { title: 'Mine', handle: foreign.handle })).handle).toBe(foreign.handle);
    expect((await callOk(t, owner.key, 'create_article', { project_id: owner.projectIds[1], title: 'Also mine', handle: foreign.handle })).handle).toBe(
      foreign.handle,
    );
  });

  it('nothing of the owner’s articles changed, and no revision was written', async () => {
    const rows = await sql(t).query(`SELECT id, version, status, title, deleted_at FROM articles WHERE id = ANY($1) ORDER BY title`, [
      [foreign.id, unreachable.id],
    ]);
    expect(rows).toEqual([
      { id: unreachable.id, version: 1, status: 'draft', title: 'Not here', deleted_at: null },
      { id: foreign.id, version: 1, status: 'draft', title: 'Not yours', deleted_at: null },
    ]);
    const [{ n }] = await sql(t).query(`SELECT count(*)::int AS n FROM article_revisions WHERE article_id = ANY($1)`, [[foreign.id, unreachable.id]]);
    expect(n).toBe(0);
  });

  describe('live article counts asked at once by different accounts (read by one statement for all)', () => {
    /** Live articles per project, counted the slow way. */
    async function counted(projectIds: string[]): Promise<number[]> {
      const rows: { project_id: string; n: number }[] = await sql(t).query(
        `SELECT project_id, count(*)::int AS n FROM articles WHERE project_id = ANY($1) AND deleted_at IS NULL GROUP BY project_id`,
        [projectIds],
      );
      return projectIds.map((id) => rows.find((r) => r.project_id === id)?.n ?? 0);
    }
    afterEach(() => jest.restoreAllMocks());

    it('each account gets its own projects’ counts; another account’s project, an unknown id and a non-UUID count none', async () => {
      const articles = t.app.get(ArticlesRepository);
      await callOk(t, stranger.key, 'create_article', { title: 'Counted for the stranger' });
      const batches = jest.spyOn(articles as any, 'countLiveBatch');
      const [mine, theirs, probing] = await Promise.all([
        articles.countLive(owner.accountId, owner.projectIds),
        articles.countLive(stranger.accountId, stranger.projectIds),
        articles.countLive(stranger.accountId, [owner.projectIds[0], MISSING_ID, 'not-a-uuid']),
      ]);
      expect(batches).toHaveBeenCalledTimes(1);
      expect(mine).toEqual(await counted(owner.projectIds));
      expect(mine.every((n) => n > 0)).toBe(true);
      expect(theirs).toEqual(await counted(stranger.projectIds));
      expect(theirs[0]).toBeGreaterThan(0);
      expect(probing).toEqual([0, 0, 0]);
    });

    it('a failed statement fails every lookup it carried, and the next ones are read again', async () => {
      const articles = t.app.get(ArticlesRepository);
      jest.spyOn(articles as any, 'countLiveBatch').mockRejectedValueOnce(new Error('connection terminated'));
      const settled = await Promise.allSettled([
        articles.countLive(owner.accountId, owner.projectIds),
        articles.countLive(stranger.accountId, stranger.projectIds),
      ]);
      expect(settled.map((r) => (r.status === 'rejected' ? String(r.reason) : r.value))).toEqual([
        'Error: connection terminated',
        'Error: connection terminated',
      ]);
      expect(await articles.countLive(owner.accountId, owner.projectIds)).toEqual(await counted(owner.projectIds));
    });

    it('list_projects called at once with both accounts’ keys answers each its own projects and counts', async () => {
      const expected = async (tenant: Tenant) => (await counted(tenant.projectIds)).map((n, i) => ({ id: tenant.projectIds[i], article_count: n }));
      const want = { owner: await expected(owner), stranger: await expected(stranger) };
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const tenant = i % 2 ? owner : stranger;
          const { items } = await callOk(t, tenant.key, 'list_projects', {});
          return {
            tenant: tenant === owner ? 'owner' : 'stranger',
            items: items.map((p: { id: string; article_count: number }) => ({ id: p.id, article_count: p.article_count })),
          };
        }),
      );
      for (const a of answers) expect(a.items).toEqual(want[a.tenant as keyof typeof want]);
    });
  });
});
