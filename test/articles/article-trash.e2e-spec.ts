import { ArticleTrashService } from '../../src/articles/article-trash.service.js';
import { admin, createTenant, MISSING_ID, type Tenant } from '../support/fixtures.js';
import { callError, callOk } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectTotalsMatch, sql } from './article-helpers.js';

describe('the trash (admin API)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let key: string;
  let project: string;

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    key = tenant.key;
    project = tenant.projectIds[0];
  });
  afterAll(async () => {
    await t.close();
  });

  const trash = (projectId: string, query = '') => admin(t, 'get', `/admin/v1/projects/${projectId}/trash${query}`);

  it('lists deleted articles newest deletion first, with who, when and the purge date, page by page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await callOk(t, key, 'create_article', { title: `Trashed ${i}`, tags: ['t'] });
      await callOk(t, key, 'delete_article', { id: a.id });
      ids.push(a.id);
    }
    const other = await createTenant(t);
    const elsewhere = await callOk(t, other.key, 'create_article', { title: 'Other trash' });
    await callOk(t, other.key, 'delete_article', { id: elsewhere.id });

    const first = await admin(t, 'get', `/admin/v1/projects/${project}/trash?limit=2`, undefined, 200);
    expect(first.items.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    expect(first.items[0]).toEqual({
      id: ids[2],
      project_id: project,
      handle: 'trashed-2',
      title: 'Trashed 2',
      excerpt: '',
      status: 'draft',
      tags: ['t'],
      published_at: null,
      updated_at: expect.any(String),
      version: 2,
      deleted_at: expect.any(String),
      deleted_by: tenant.keyId,
      purge_at: expect.any(String),
    });
    expect(Date.parse(first.items[0].purge_at) - Date.parse(first.items[0].deleted_at)).toBe(30 * 86_400_000);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await admin(t, 'get', `/admin/v1/projects/${project}/trash?limit=2&cursor=${first.next_cursor}`, undefined, 200);
    expect(second).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    // Another project's trash is its own.
    expect((await trash(other.projectIds[0])).items.map((i: { id: string }) => i.id)).toEqual([elsewhere.id]);
  });

  it('answers the admin API errors: 401 without the token, 404 for an unknown project, 400 for a bad id, limit or cursor', async () => {
    const noToken = await t.http.get(`/admin/v1/projects/${project}/trash`);
    expect(noToken.status).toBe(401);
    expect((await t.http.get(`/admin/v1/projects/${MISSING_ID}/trash`).set('Authorization', `Bearer ${t.adminToken}`)).status).toBe(404);
    expect((await t.http.get(`/admin/v1/projects/nope/trash`).set('Authorization', `Bearer ${t.adminToken}`)).status).toBe(400);
    expect((await t.http.get(`/admin/v1/projects/${project}/trash?limit=0`).set('Authorization', `Bearer ${t.adminToken}`)).status).toBe(400);
    const badCursor = await t.http.get(`/admin/v1/projects/${project}/trash?cursor=garbage`).set('Authorization', `Bearer ${t.adminToken}`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.message).toBe('The cursor is not one this API returned; start again without it.');
    expect((await t.http.post(`/admin/v1/articles/${MISSING_ID}/restore`)).status).toBe(401);
  });

  it('restores an article: live again, version bumped, its trashed state kept as a revision, totals right', async () => {
    const a = await callOk(t, key, 'create_article', { title: 'Come back', status: 'published' });
    await callOk(t, key, 'delete_article', { id: a.id });
    await expectTotalsMatch(t, key, project);
    const res = await t.http.post(`/admin/v1/articles/${a.id}/restore`).set('Authorization', `Bearer ${t.adminToken}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ id: a.id, handle: 'come-back', status: 'published', version: 3 }));
    expect(await callOk(t, key, 'get_article', { id: a.id })).toEqual(expect.objectContaining({ version: 3, handle: 'come-back' }));
    const revisions = await sql(t).query(
      `SELECT version, credential_id, snapshot->>'deleted_at' IS NOT NULL AS trashed FROM article_revisions WHERE article_id = $1 ORDER BY version`,
      [a.id],
    );
    expect(revisions).toEqual([
      { version: 1, credential_id: tenant.keyId, trashed: false },
      { version: 2, credential_id: null, trashed: true },
    ]);
    expect((await trash(project)).items.map((i: { id: string }) => i.id)).not.toContain(a.id);
    await expectTotalsMatch(t, key, project);
    // Restoring it again: it is live, not in the trash.
    const again = await t.http.post(`/admin/v1/articles/${a.id}/restore`).set('Authorization', `Bearer ${t.adminToken}`);
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({ code: 'invalid_state', message: `The article "${a.id}" is not in the trash; it is live.` });
    const unknown = await t.http.post(`/admin/v1/articles/${MISSING_ID}/restore`).set('Authorization', `Bearer ${t.adminToken}`);
    expect(unknown.status).toBe(404);
  });

  it('a handle taken meanwhile is a 409 naming a free one; restoring under that handle works', async () => {
    const a = await callOk(t, key, 'create_article', { title: 'Popular', handle: 'popular' });
    await callOk(t, key, 'delete_article', { id: a.id });
    await callOk(t, key, 'create_article', { title: 'Usurper', handle: 'popular' });
    const clash = await t.http.post(`/admin/v1/articles/${a.id}/restore`).set('Authorization', `Bearer ${t.adminToken}`);
    expect(clash.status).toBe(409);
    expect(clash.body.error).toEqual({
      code: 'handle_taken',
      message: 'The handle "popular" was taken by a live article meanwhile; "popular-2" is free. Restore with {"handle": "popular-2"}.',
      details: { handle: 'popular', suggestion: 'popular-2' },
    });
    const bad = await t.http.post(`/admin/v1/articles/${a.id}/restore`).set('Authorization', `Bearer ${t.adminToken}`).send({ handle: 'Not Valid' });
    expect(bad.status).toBe(400);
    const restored = await t.http.post(`/admin/v1/articles/${a.id}/restore`).set('Authorization', `Bearer ${t.adminToken}`).send({ handle: 'popular-2' });
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual(expect.objectContaining({ id: a.id, handle: 'popular-2' }));
    expect(await callError(t, key, 'create_article', { title: 'x', handle: 'popular-2' })).toEqual(expect.objectContaining({ code: 'handle_taken' }));
  });

  it('purges trashed articles older than 30 days (by Postgres time), with their revisions, and nothing else', async () => {
    const old = await callOk(t, key, 'create_article', { title: 'Old trash' });
    const young = await callOk(t, key, 'create_article', { title: 'Young trash' });
    const live = await callOk(t, key, 'create_article', { title: 'Still live' });
    await callOk(t, key, 'update_article', { id: old.id, version: 1, body: 'edited' });
    await callOk(t, key, 'delete_article', { id: old.id });
    await callOk(t, key, 'delete_article', { id: young.id });
    await sql(t).query(`UPDATE articles SET deleted_at = now() - interval '30 days 1 minute' WHERE id = $1`, [old.id]);
    await sql(t).query(`UPDATE articles SET deleted_at = now() - interval '29 days 23 hours' WHERE id = $1`, [young.id]);
    // Also aged, but live: the purge only takes what is in the trash.
    await sql(t).query(`UPDATE articles SET updated_at = now() - interval '400 days' WHERE id = $1`, [live.id]);

    // Every instance also purges on its own timer, so the count of this call is not asserted: the state is.
    await expect(t.app.get(ArticleTrashService).purgeExpired()).resolves.toEqual(expect.any(Number));
    const left = await sql(t).query(`SELECT id FROM articles WHERE id = ANY($1) ORDER BY title`, [[old.id, young.id, live.id]]);
    expect(left).toEqual([{ id: live.id }, { id: young.id }]);
    const [{ n }] = await sql(t).query(`SELECT count(*)::int AS n FROM article_revisions WHERE article_id = $1`, [old.id]);
    expect(n).toBe(0);
    expect((await trash(project)).items.map((i: { id: string }) => i.id)).toEqual(expect.arrayContaining([young.id]));
    expect((await trash(project)).items.map((i: { id: string }) => i.id)).not.toContain(old.id);
    const gone = await t.http.post(`/admin/v1/articles/${old.id}/restore`).set('Authorization', `Bearer ${t.adminToken}`);
    expect(gone.status).toBe(404);
    await expectTotalsMatch(t, key, project);
  });

  it('two instances purging at once both succeed and leave no expired article', async () => {
    const t2 = await startTestApp();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const a = await callOk(t, key, 'create_article', { title: `Expired ${i}` });
        await callOk(t, key, 'delete_article', { id: a.id });
        ids.push(a.id);
      }
      await sql(t).query(`UPDATE articles SET deleted_at = now() - interval '31 days' WHERE id = ANY($1)`, [ids]);
      const counts = await Promise.all([t.app.get(ArticleTrashService).purgeExpired(), t2.app.get(ArticleTrashService).purgeExpired()]);
      expect(counts).toEqual([expect.any(Number), expect.any(Number)]);
      const [{ n }] = await sql(t).query(`SELECT count(*)::int AS n FROM articles WHERE id = ANY($1)`, [ids]);
      expect(n).toBe(0);
    } finally {
      await t2.close();
    }
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await t.http.get('/admin/v1/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/admin/v1/projects/{project_id}/trash', '/admin/v1/articles/{article_id}/restore']));
    expect(doc.paths['/admin/v1/projects/{project_id}/trash'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['project_id', 'limit', 'cursor']),
    );
    expect(doc.paths['/admin/v1/articles/{article_id}/restore'].post.responses).toEqual(
      expect.objectContaining({ 200: expect.anything(), 404: expect.anything(), 409: expect.anything() }),
    );
  });
});
