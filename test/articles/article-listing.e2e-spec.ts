import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { ANCHOR_EVERY, ArticleListingService, SEARCH_TOTAL_CAP, type ListArticlesQuery } from '../../src/articles/article-listing.service.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { call, callOk, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectTotalsMatch, sql } from './article-helpers.js';

describe('list_articles: totals from article_counts, deep pages from keyset anchors, search on trigram indexes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('totals stay equal to count(*) through creates, status changes, edits, deletes and restores', async () => {
    const tenant = await createTenant(t);
    const key = tenant.key;
    const project = tenant.projectIds[0];
    await expectTotalsMatch(t, key, project);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await callOk(t, key, 'create_article', { title: `Counted ${i}`, status: i < 3 ? 'published' : 'draft' })).id);
    await expectTotalsMatch(t, key, project);
    await callOk(t, key, 'publish_article', { id: ids[3] });
    await callOk(t, key, 'publish_article', { id: ids[4], published_at: '2099-01-01T00:00:00Z' });
    await expectTotalsMatch(t, key, project);
    await callOk(t, key, 'update_article', { id: ids[5], version: 1, title: 'Counted, edited' });
    await callOk(t, key, 'delete_article', { id: ids[0] });
    await callOk(t, key, 'delete_article', { id: ids[4] });
    await callOk(t, key, 'delete_article', { id: ids[6] });
    await expectTotalsMatch(t, key, project);
    for (const id of [ids[0], ids[4]]) {
      const res = await t.http.post(`/admin/v1/articles/${id}/restore`).set('Authorization', `Bearer ${t.adminToken}`);
      expect(res.status).toBe(200);
    }
    await expectTotalsMatch(t, key, project);
    const listed = await callOk(t, key, 'list_articles', { page_size: 3 });
    expect(listed.pagination).toEqual({ total: 9, page: 1, page_size: 3, pages: 3 });
    expect((await callOk(t, key, 'list_projects', {})).items).toEqual([expect.objectContaining({ id: project, article_count: 9 })]);
    expect(await callOk(t, key, 'list_articles', { page: 50, page_size: 3 })).toEqual({
      items: [],
      pagination: { total: 9, page: 50, page_size: 3, pages: 3 },
    });
  });

  describe('deep pages', () => {
    let tenant: Tenant;
    let project: string;
    const N = 1_100;

    /** The page as plain OFFSET computes it, in the same order. */
    async function expected(page: number, pageSize: number, status?: string): Promise<string[]> {
      const rows = await sql(t).query(
        `SELECT id FROM articles WHERE project_id = $1 AND deleted_at IS NULL ${status ? 'AND status = $4' : ''} ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [project, pageSize, (page - 1) * pageSize, ...(status ? [status] : [])],
      );
      return rows.map((r: { id: string }) => r.id);
    }

    async function listed(page: number, pageSize: number, status?: string): Promise<{ ids: string[]; total: number }> {
      const out = await callOk(t, tenant.key, 'list_articles', { page, page_size: pageSize, ...(status ? { status } : {}) });
      return { ids: out.items.map((i: { id: string }) => i.id), total: out.pagination.total };
    }

    const anchorSets = () => (t.app.get(ArticleListingService) as unknown as { anchorSets: Map<string, { generation: string }> }).anchorSets;

    async function expectPagesMatch(pages: number[], pageSize: number, status?: string): Promise<void> {
      for (const page of pages)
        expect(await listed(page, pageSize, status)).toEqual({ ids: await expected(page, pageSize, status), total: expect.any(Number) });
    }

    beforeAll(async () => {
      tenant = await createTenant(t);
      project = tenant.projectIds[0];
      // Groups of three share an updated_at, so the id breaks ties (and the anchors must too).
      await sql(t).query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, status, updated_at)
         SELECT gen_random_uuid(), $1, $2, 'deep-' || i, 'Deep ' || i, CASE WHEN i % 3 = 0 THEN 'published' ELSE 'draft' END, now() - (i / 3) * interval '1 second'
           FROM generate_series(1, $3::int) i`,
        [tenant.accountId, project, N],
      );
    });

    it('every page equals plain OFFSET, before and after the anchors are built, overall and by status', async () => {
      const pages = [1, 2, Math.floor(ANCHOR_EVERY / 20), Math.ceil(ANCHOR_EVERY / 20), 26, 40, 54, 55, 56, 200];
      await expectPagesMatch(pages, 20);
      await expectPagesMatch([1, 13, 20, 37], 7, 'published');
      // The deep pages above asked for the anchors; they are built in the background.
      for (let i = 0; i < 50 && !(anchorSets().has(`${project}|*`) && anchorSets().has(`${project}|published`)); i++) await sleep(100);
      expect(anchorSets().get(`${project}|*`)).toEqual(expect.objectContaining({ generation: expect.any(String) }));
      await expectPagesMatch(pages, 20);
      await expectPagesMatch([1, 13, 20, 37, 53, 60], 7, 'published');
      await expectPagesMatch([13, 14, 54], 20, 'draft');
      // Page sizes that do not divide the anchor spacing.
      await expectPagesMatch([37, 38, 39, 157], 7);
      await expectPagesMatch([11, 12], 99);
      expect((await listed(55, 20)).total).toBe(N);
    });

    it('a write makes the anchors stale: the next deep page is still exact', async () => {
      await expectPagesMatch([40], 20);
      const generation = anchorSets().get(`${project}|*`)?.generation;
      // Move a row from deep down to the top, and add one: every deep position shifts.
      const [row] = await sql(t).query(`SELECT id, version FROM articles WHERE project_id = $1 AND handle = 'deep-1000'`, [project]);
      await callOk(t, tenant.key, 'update_article', { id: row.id, version: row.version, title: 'Deep 1000, edited' });
      await callOk(t, tenant.key, 'create_article', { title: 'Fresh on top' });
      await expectPagesMatch([1, 14, 30, 40, 55, 56], 20);
      for (let i = 0; i < 50 && anchorSets().get(`${project}|*`)?.generation === generation; i++) {
        await sleep(1_100);
        // A deep page not read since the write (a kept one is answered without reading, so refreshes nothing).
        await listed(30 + (i % 25), 20);
      }
      expect(anchorSets().get(`${project}|*`)?.generation).not.toBe(generation);
      await expectPagesMatch([14, 30, 40, 55, 56], 20);
      expect((await listed(1, 20)).total).toBe(N + 1);
    });

    it('anchors of one project never serve another', async () => {
      const other = await createTenant(t);
      await sql(t).query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, status) SELECT gen_random_uuid(), $1, $2, 'other-' || i, 'Other ' || i, 'draft' FROM generate_series(1, 300) i`,
        [other.accountId, other.projectIds[0]],
      );
      const page = await callOk(t, other.key, 'list_articles', { page: 14, page_size: 20 });
      expect(page.pagination.total).toBe(300);
      expect(page.items.every((i: { handle: string }) => i.handle.startsWith('other-'))).toBe(true);
    });
  });

  describe('kept pages', () => {
    let tenant: Tenant;
    let scope: { accountId: string; projectId: string };
    const listing = () => t.app.get(ArticleListingService);
    const list = (q: Partial<ListArticlesQuery> = {}) => listing().list(scope, { page: 1, page_size: 20, ...q });

    beforeAll(async () => {
      tenant = await createTenant(t);
      scope = { accountId: tenant.accountId, projectId: tenant.projectIds[0] };
      for (let i = 0; i < 3; i++) await callOk(t, tenant.key, 'create_article', { title: `Kept ${i}` });
    });

    it('answers the same frozen page while the project is unchanged, and a fresh one after any write', async () => {
      const first = await list();
      expect(await list()).toBe(first);
      for (const part of [first, first.items, first.items[0], first.items[0].tags, first.pagination]) expect(Object.isFrozen(part)).toBe(true);

      // Through the tool, as a client edits.
      await callOk(t, tenant.key, 'update_article', { id: first.items[2].id, version: 1, title: 'Kept, edited' });
      const edited = await list();
      expect(edited).not.toBe(first);
      expect(edited.items[0]).toEqual(expect.objectContaining({ id: first.items[2].id, title: 'Kept, edited' }));
      expect(await list()).toBe(edited);

      // In SQL, as another instance's write reaches the database: seen on the next call, nothing to forget here.
      await sql(t).query(`UPDATE articles SET excerpt = 'changed elsewhere' WHERE id = $1`, [first.items[1].id]);
      expect((await list()).items.find((i) => i.id === first.items[1].id)?.excerpt).toBe('changed elsewhere');

      await callOk(t, tenant.key, 'delete_article', { id: first.items[0].id });
      const trashed = await list();
      expect(trashed.items.map((i) => i.id)).not.toContain(first.items[0].id);
      expect(trashed.pagination.total).toBe(2);

      // A status listing is kept on its own, and a status change reaches it.
      const drafts = await list({ status: 'draft' });
      expect(drafts.items).toHaveLength(2);
      await callOk(t, tenant.key, 'publish_article', { id: drafts.items[0].id });
      expect((await list({ status: 'draft' })).items.map((i) => i.id)).toEqual([drafts.items[1].id]);
      expect((await list({ status: 'published' })).items.map((i) => i.id)).toEqual([drafts.items[0].id]);
    });

    it('keeps each page and page size apart', async () => {
      const one = await list({ page_size: 1 });
      const two = await list({ page: 2, page_size: 1 });
      expect(one.items[0].id).not.toBe(two.items[0].id);
      expect(await list({ page_size: 1 })).toBe(one);
      expect(await list({ page: 2, page_size: 1 })).toBe(two);
    });

    it("never answers another account's kept page, even for the same project id", async () => {
      const kept = await list();
      expect(kept.items.length).toBeGreaterThan(0);
      const stranger = await createTenant(t);
      expect(await listing().list({ accountId: stranger.accountId, projectId: scope.projectId }, { page: 1, page_size: 20 })).toEqual({
        items: [],
        pagination: { total: 0, page: 1, page_size: 20, pages: 0 },
      });
    });

    it('answers concurrent calls alike, and every call after a write sees it', async () => {
      const before = await Promise.all(Array.from({ length: 20 }, () => list()));
      for (const page of before) expect(page).toEqual(before[0]);
      const created = await callOk(t, tenant.key, 'create_article', { title: 'Kept, newest' });
      const after = await Promise.all(Array.from({ length: 20 }, () => list()));
      for (const page of after) expect(page.items[0].id).toBe(created.id);
    });

    describe('LISTING_CACHE_PAGES', () => {
      let none: TestApp;
      let two: TestApp;
      beforeAll(async () => {
        [none, two] = await Promise.all([startTestApp({ LISTING_CACHE_PAGES: '0' }), startTestApp({ LISTING_CACHE_PAGES: '2' })]);
      });
      afterAll(async () => {
        await Promise.all([none.close(), two.close()]);
      });

      it('sends the same bytes for a kept page as an instance that keeps none', async () => {
        const body = call(7, 'list_articles', { page_size: 3 });
        const kept = [await rpc(t, tenant.key, body), await rpc(t, tenant.key, body)];
        const unkept = await rpc(none, tenant.key, body);
        expect(unkept.status).toBe(200);
        expect(kept.map((r) => r.text)).toEqual([unkept.text, unkept.text]);
        const { result } = JSON.parse(unkept.text);
        expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent, null, 2) }]);
        expect(result.structuredContent.items[0]).toEqual(expect.objectContaining({ title: 'Kept, newest' }));
      });

      it('keeps none with 0, and the most recently used ones up to the bound', async () => {
        const unkept = (q: Partial<ListArticlesQuery>) => none.app.get(ArticleListingService).list(scope, { page: 1, page_size: 20, ...q });
        expect(await unkept({})).not.toBe(await unkept({}));
        const bounded = (q: Partial<ListArticlesQuery>) => two.app.get(ArticleListingService).list(scope, { page: 1, page_size: 20, ...q });
        const [a, b] = [await bounded({ page_size: 1 }), await bounded({ page_size: 2 })];
        expect(await bounded({ page_size: 1 })).toBe(a); // a is now the most recently used
        await bounded({ page_size: 3 }); // forgets b
        expect(await bounded({ page_size: 1 })).toBe(a);
        expect(await bounded({ page_size: 2 })).not.toBe(b);
      });
    });
  });

  describe('search and tag', () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await createTenant(t);
      const titles = ['PostgreSQL tips', 'Why postgres?', 'Node streams', '100% coverage', 'snake_case names', 'Über cafés'];
      for (const [i, title] of titles.entries())
        await callOk(t, tenant.key, 'create_article', { title, tags: i % 2 ? ['odd'] : ['even'], handle: i === 2 ? 'pg-and-node' : undefined });
    });
    const search = async (args: Record<string, unknown>) => {
      const out = await callOk(t, tenant.key, 'list_articles', args);
      return { titles: out.items.map((i: { title: string }) => i.title).sort(), total: out.pagination.total };
    };

    it('matches the title or the handle, case-insensitive substring, with totals', async () => {
      expect(await search({ search: 'POSTGRES' })).toEqual({ titles: ['PostgreSQL tips', 'Why postgres?'], total: 2 });
      expect(await search({ search: 'pg-and' })).toEqual({ titles: ['Node streams'], total: 1 });
      expect(await search({ search: 'über' })).toEqual({ titles: ['Über cafés'], total: 1 });
      expect(await search({ search: 'uber-cafes' })).toEqual({ titles: ['Über cafés'], total: 1 });
      expect(await search({ search: 'postgres', page_size: 1, page: 2 })).toEqual({ titles: [expect.any(String)], total: 2 });
    });

    it('treats % and _ as plain characters', async () => {
      expect(await search({ search: '%' })).toEqual({ titles: ['100% coverage'], total: 1 });
      expect(await search({ search: '_' })).toEqual({ titles: ['snake_case names'], total: 1 });
      expect(await search({ search: 'e_c' })).toEqual({ titles: ['snake_case names'], total: 1 });
    });

    it('filters by tag and status, alone or with search', async () => {
      expect((await search({ tag: 'odd' })).total).toBe(3);
      expect(await search({ tag: 'odd', search: 'postgres' })).toEqual({ titles: ['Why postgres?'], total: 1 });
      expect(await search({ tag: 'none' })).toEqual({ titles: [], total: 0 });
      expect(await search({ status: 'published', search: 'postgres' })).toEqual({ titles: [], total: 0 });
      expect(await search({ status: 'draft', tag: 'even' })).toEqual({ titles: ['Node streams', 'PostgreSQL tips', 'snake_case names'], total: 3 });
    });

    it('counts at most SEARCH_TOTAL_CAP matches, and says so', async () => {
      const big = await createTenant(t);
      await sql(t).query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, status, tags)
         SELECT gen_random_uuid(), $1, $2, 'many-' || i, 'Many ' || i, 'draft', ARRAY['bulk'] FROM generate_series(1, $3::int) i`,
        [big.accountId, big.projectIds[0], SEARCH_TOTAL_CAP + 5],
      );
      for (const args of [{ search: 'many' }, { tag: 'bulk' }, { search: 'many', tag: 'bulk', status: 'draft' }]) {
        const out = await callOk(t, big.key, 'list_articles', { ...args, page_size: 100 });
        expect(out.pagination).toEqual({ total: SEARCH_TOTAL_CAP, page: 1, page_size: 100, pages: SEARCH_TOTAL_CAP / 100, total_capped: true });
        expect(out.items).toHaveLength(100);
      }
      const few = await callOk(t, big.key, 'list_articles', { search: 'many 1000' });
      // 1000 and 10000..10005.
      expect(few.pagination).toEqual({ total: 7, page: 1, page_size: 20, pages: 1 });
      // The unfiltered total is exact whatever the size.
      expect((await callOk(t, big.key, 'list_articles', {})).pagination.total).toBe(SEARCH_TOTAL_CAP + 5);
    });

    it('never matches another project', async () => {
      const other = await createTenant(t);
      await callOk(t, other.key, 'create_article', { title: `PostgreSQL elsewhere ${randomUUID()}` });
      expect((await search({ search: 'postgres' })).total).toBe(2);
    });
  });
});
