import { createDatabase, eventually, jobRow, withClient, type TestDatabase } from '../support/database.js';
import { configuredTenant, createTenant } from '../support/fixtures.js';
import { callError, callOk, callTool, connectClient, rpc, toolJson } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/**
 * The job path as a client sees it: the local providers take LOCAL_PROVIDER_DELAY_MS in ten
 * cancellable steps, and a small SYNC_BUDGET_MS makes every call answer with a job id first.
 */
describe('jobs: write_article and generate_image run as jobs (get_job, list_jobs, cancel_job)', () => {
  const env = { SYNC_BUDGET_MS: '200', LOCAL_PROVIDER_DELAY_MS: '3000', PUBLIC_URL: 'https://blog.example.com' };
  let t: TestApp;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app(env);
  });
  afterAll(() => db?.drop());

  it('a call that outlives the budget answers {"status":"running","job_id","poll_after_s"}; get_job shows progress, then the result', async () => {
    const tenant = await configuredTenant(t);
    const started = await callOk(t, tenant.key, 'write_article', { brief: 'Sourdough for beginners', title: 'Sourdough basics' });
    expect(started).toEqual({ status: 'running', job_id: expect.any(String), poll_after_s: expect.any(Number) });
    expect(Number.isInteger(started.poll_after_s) && started.poll_after_s > 0).toBe(true);

    const midway = await eventually(
      () => callOk(t, tenant.key, 'get_job', { job_id: started.job_id }),
      (j) => j.status !== 'queued' && j.progress > 0,
    );
    expect(midway).toMatchObject({ id: started.job_id, tool: 'write_article', project_id: tenant.projectIds[0], status: 'running' });
    expect(midway.progress).toBeLessThan(1);
    expect(midway.started_at).toEqual(expect.any(String));
    expect(midway.finished_at).toBeNull();
    expect(midway.result).toBeUndefined();

    const done = await eventually(
      () => callOk(t, tenant.key, 'get_job', { job_id: started.job_id }),
      (j) => j.status !== 'running',
    );
    expect(done).toMatchObject({ status: 'succeeded', progress: 1 });
    expect(done.result).toEqual({
      status: 'succeeded',
      job_id: started.job_id,
      article: expect.objectContaining({ title: 'Sourdough basics', status: 'draft', source: 'ai', job_id: started.job_id }),
    });
    expect(new Date(done.created_at) <= new Date(done.started_at) && new Date(done.started_at) <= new Date(done.finished_at)).toBe(true);

    // The article is there once, readable like any other, and records the config version.
    const { revisions, ...article } = await callOk(t, tenant.key, 'get_article', { id: done.result.article.id });
    expect(article).toEqual(done.result.article);
    expect(revisions).toEqual({ kept: 0, limit: 50 });
    const rows = await withClient(db.url, (c) => c.query('SELECT agent_config_version FROM articles WHERE job_id = $1', [started.job_id]));
    expect(rows.rows).toEqual([{ agent_config_version: 1 }]);

    // list_jobs: newest first, filtered by status, without results.
    const second = await callOk(t, tenant.key, 'write_article', { brief: 'Rye bread' });
    const listed = await callOk(t, tenant.key, 'list_jobs', {});
    expect(listed.items.map((j: { id: string }) => j.id)).toEqual([second.job_id, started.job_id]);
    expect(listed.pagination).toEqual({ total: 2, page: 1, page_size: 20, pages: 1 });
    expect(listed.items[1].result).toBeUndefined();
    const succeeded = await callOk(t, tenant.key, 'list_jobs', { status: 'succeeded', page_size: 1 });
    expect(succeeded.items.map((j: { id: string }) => j.id)).toEqual([started.job_id]);
    await expect(callError(t, tenant.key, 'list_jobs', { status: 'done' })).resolves.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('queued, running, succeeded, failed, cancelled'),
    });
    await callOk(t, tenant.key, 'cancel_job', { job_id: second.job_id });
  });

  it('generate_image with article_id: the media is served, set as featured image in a new article version, and returned as image content', async () => {
    const tenant = await configuredTenant(t);
    const client = await connectClient(t, tenant.key);
    try {
      const draft = toolJson(await client.callTool({ name: 'write_article', arguments: { brief: 'Crusts' } }));
      const written = await eventually(
        () => callOk(t, tenant.key, 'get_job', { job_id: draft.job_id }),
        (j) => j.status === 'succeeded',
      );
      const article = written.result.article;
      const started = toolJson(
        await client.callTool({ name: 'generate_image', arguments: { prompt: 'a golden crust', article_id: article.id, aspect_ratio: '4:3' } }),
      );
      expect(started.status).toBe('running');
      await eventually(
        () => callOk(t, tenant.key, 'get_job', { job_id: started.job_id }),
        (j) => j.status === 'succeeded',
      );
      const job = await client.callTool({ name: 'get_job', arguments: { job_id: started.job_id } });
      const view = toolJson(job);
      expect(view.result).toEqual({
        status: 'succeeded',
        job_id: started.job_id,
        media: { id: expect.any(String), url: `https://blog.example.com/media/${view.result.media.id}`, mime_type: 'image/png', width: 1024, height: 768 },
        article_id: article.id,
      });
      const content = job.content as { type: string; data?: string; mimeType?: string }[];
      expect(content).toHaveLength(2);
      expect(content[1]).toEqual({ type: 'image', data: expect.any(String), mimeType: 'image/png' });
      const png = Buffer.from(content[1].data!, 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

      const served = await t.http
        .get(`/media/${view.result.media.id}`)
        .set('Authorization', `Bearer ${tenant.key}`)
        .buffer(true)
        .parse((res, cb) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => cb(null, Buffer.concat(chunks)));
        });
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toBe('image/png');
      expect(Buffer.compare(served.body as Buffer, png)).toBe(0);

      const after = await callOk(t, tenant.key, 'get_article', { id: article.id });
      expect(after.featured_image_id).toBe(view.result.media.id);
      expect(after.version).toBe(article.version + 1);
      const revisions = await withClient(db.url, (c) => c.query('SELECT version FROM article_revisions WHERE article_id = $1', [article.id]));
      expect(revisions.rows).toEqual([{ version: article.version }]);
    } finally {
      await client.close();
    }
  });

  it('generate_image refuses an unknown or foreign article before doing any work', async () => {
    const tenant = await configuredTenant(t);
    const other = await configuredTenant(t);
    const theirs = await callOk(t, other.key, 'write_article', { brief: 'theirs' });
    const theirArticle = await eventually(
      () => callOk(t, other.key, 'get_job', { job_id: theirs.job_id }),
      (j) => j.status === 'succeeded',
    );
    for (const article_id of [theirArticle.result.article.id, '00000000-0000-7000-8000-000000000000', 'nope']) {
      await expect(callError(t, tenant.key, 'generate_image', { prompt: 'x', article_id })).resolves.toEqual({
        code: 'not_found',
        message: `No article with id "${article_id}" in this project.`,
      });
    }
    await expect(callOk(t, tenant.key, 'list_jobs', {})).resolves.toMatchObject({ items: [] });
  });

  it('cancel_job stops a running job: it stays cancelled and writes nothing; a finished job cannot be cancelled', async () => {
    const tenant = await configuredTenant(t);
    const started = await callOk(t, tenant.key, 'write_article', { brief: 'To be cancelled' });
    await eventually(
      () => jobRow(db.url, started.job_id),
      (j) => j.status === 'running' && j.progress > 0,
    );
    const cancelled = await callOk(t, tenant.key, 'cancel_job', { job_id: started.job_id });
    expect(cancelled).toMatchObject({ id: started.job_id, status: 'cancelled', finished_at: expect.any(String) });
    // Nothing may change after the cancellation: the only worker on this database stops, and its
    // shutdown waits for every run still finishing its steps; then a fresh instance serves the rest.
    await t.close();
    const row = await jobRow(db.url, started.job_id);
    expect(row).toMatchObject({ status: 'cancelled', result: null, error: null, locked_by: null });
    const articles = await withClient(db.url, (c) => c.query('SELECT count(*)::int AS n FROM articles WHERE job_id = $1', [started.job_id]));
    expect(articles.rows[0].n).toBe(0);
    t = await db.app(env);
    await expect(callError(t, tenant.key, 'cancel_job', { job_id: started.job_id })).resolves.toEqual({
      code: 'invalid_state',
      message: `Job "${started.job_id}" already cancelled; a finished job cannot be cancelled.`,
      details: { status: 'cancelled' },
    });

    const quick = await callOk(t, tenant.key, 'write_article', { brief: 'Finished' });
    await eventually(
      () => jobRow(db.url, quick.job_id),
      (j) => j.status === 'succeeded',
    );
    await expect(callError(t, tenant.key, 'cancel_job', { job_id: quick.job_id })).resolves.toEqual({
      code: 'invalid_state',
      message: `Job "${quick.job_id}" already succeeded; a finished job cannot be cancelled.`,
      details: { status: 'succeeded' },
    });
  });

  it('a queued job is cancelled before any worker runs it', async () => {
    const tenant = await configuredTenant(t);
    // Enqueued behind a run_after in the future: no worker may claim it yet.
    const started = await callOk(t, tenant.key, 'write_article', { brief: 'Later' });
    await withClient(db.url, (c) => c.query(`UPDATE jobs SET run_after = now() + interval '1 hour' WHERE id = $1 AND status = 'queued'`, [started.job_id]));
    const row = await jobRow(db.url, started.job_id);
    if (row.status === 'queued') {
      await expect(callOk(t, tenant.key, 'cancel_job', { job_id: started.job_id })).resolves.toMatchObject({ status: 'cancelled', started_at: null });
    } else {
      // Claimed before the UPDATE landed: cancel it running instead; the outcome is the same.
      await expect(callOk(t, tenant.key, 'cancel_job', { job_id: started.job_id })).resolves.toMatchObject({ status: 'cancelled' });
    }
  });

  it('another account’s job ids, and jobs of projects the credential cannot reach (or not with the role the tool needs), behave like unknown ids', async () => {
    const owner = await configuredTenant(t, { projects: 2 });
    const [a, b] = owner.projectIds;
    const inA = await callOk(t, owner.key, 'write_article', { project_id: a, brief: 'In A' });
    const inB = await callOk(t, owner.key, 'write_article', { project_id: b, brief: 'In B' });
    const stranger = await createTenant(t);
    // Same account: editor on A, viewer on B.
    const mixed = await t.http
      .post(`/admin/v1/accounts/${owner.accountId}/api-keys`)
      .set('Authorization', `Bearer ${t.adminToken}`)
      .send({
        name: 'mixed',
        scopes: ['read', 'write'],
        projects: [
          { project_id: a, role: 'editor' },
          { project_id: b, role: 'viewer' },
        ],
      });
    const onlyA = await t.http
      .post(`/admin/v1/accounts/${owner.accountId}/api-keys`)
      .set('Authorization', `Bearer ${t.adminToken}`)
      .send({ name: 'only A', scopes: ['read', 'write'], projects: [{ project_id: a, role: 'owner' }] });

    const unknown = async (token: string, tool: 'get_job' | 'cancel_job', id: string) => {
      await expect(callError(t, token, tool, { job_id: id })).resolves.toEqual({
        code: 'not_found',
        message: `No job with id "${id}"; list_jobs lists the jobs of a project.`,
      });
    };
    for (const tool of ['get_job', 'cancel_job'] as const) {
      await unknown(stranger.key, tool, inA.job_id);
      await unknown(onlyA.body.key, tool, inB.job_id);
      await unknown(stranger.key, tool, '00000000-0000-7000-8000-000000000000');
      await unknown(stranger.key, tool, 'not-a-uuid');
    }
    // The viewer role on B reads B's job but may not cancel it: for cancel_job it does not exist.
    await expect(callOk(t, mixed.body.key, 'get_job', { job_id: inB.job_id })).resolves.toMatchObject({ id: inB.job_id });
    await unknown(mixed.body.key, 'cancel_job', inB.job_id);
    await expect(callOk(t, mixed.body.key, 'cancel_job', { job_id: inA.job_id })).resolves.toMatchObject({ status: expect.stringMatching(/cancelled/) });
    // None of the refused cancels touched B's job.
    const row = await jobRow(db.url, inB.job_id);
    expect(row.cancel_requested).toBe(false);
    // list_jobs is project-scoped: the stranger sees none of them.
    await expect(callOk(t, stranger.key, 'list_jobs', {})).resolves.toMatchObject({ items: [], pagination: { total: 0 } });
    await callOk(t, owner.key, 'cancel_job', { job_id: inB.job_id }).catch(() => undefined);
  });

  it('wrong argument types are refused before any job exists', async () => {
    const tenant = await configuredTenant(t);
    const cases: [string, Record<string, unknown>, string][] = [
      ['write_article', {}, 'Missing required argument "brief".'],
      ['write_article', { brief: '' }, 'Invalid value for "brief": must not be empty.'],
      ['write_article', { brief: 'x', length: 'epic' }, 'Invalid value for "length": must be one of short, medium, long.'],
      ['generate_image', { prompt: 'x', aspect_ratio: '3:2' }, 'Invalid value for "aspect_ratio": must be one of 1:1, 16:9, 4:3.'],
      ['get_job', {}, 'Missing required argument "job_id".'],
    ];
    for (const [name, args, message] of cases) {
      await expect(callError(t, tenant.key, name, args)).resolves.toEqual({ code: 'invalid_arguments', message });
    }
    const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_job', arguments: { job_id: { $gt: '' } } } });
    expect(res.body.error).toEqual({ code: -32602, message: 'Invalid value for "job_id": expected a string.' });
    const jobs = await callTool(t, tenant.key, 'list_jobs', {});
    expect(jobs.json.pagination.total).toBe(0);
  });
});
