import { startInstances, type TestDatabase } from '../support/database.js';
import { activity, createTenant, WRITER_ANSWERS } from '../support/fixtures.js';
import { streamingCall } from '../support/sse-call.js';
import type { TestApp } from '../support/test-app.js';
import { CLIENT_INFO, expectModernResult, meta, modern, modernBody, modernHeaders } from '../support/wire2026.js';

/**
 * One 2026-07-28 client whose consecutive calls land on two instances behind a gateway
 * (docs/protocol.md#the-2026-07-28-era): nothing of one request is kept for the next (no session), so any instance serves any call;
 * the catalogue, routing, jobs and progress work as in 2025.
 */
describe('/mcp 2026-07-28 across two instances', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const started = await startInstances({ LOCAL_PROVIDER_DELAY_MS: '300' }, { LOCAL_PROVIDER_DELAY_MS: '300' });
    db = started.db;
    [a, b] = started.apps;
  });
  afterAll(() => db?.drop());

  it('discover, list, set up, write, read, update and follow a job, alternating instances', async () => {
    const tenant = await createTenant(a, { projects: 2 });
    const [project] = tenant.projectIds;
    const apps = [a, b];
    let id = 0;
    /** The next call of the client, on the other instance than the last. */
    const next = (method: string, params: Record<string, unknown> = {}) => {
      id++;
      return modern(apps[id % 2], tenant.key, id, method, params);
    };
    const tool = async (name: string, args: Record<string, unknown>) => expectModernResult(await next('tools/call', { name, arguments: args }), id);

    expect(expectModernResult(await next('server/discover'), id).capabilities.tools).toEqual({});
    const tools = expectModernResult(await next('tools/list'), id).tools;
    // Two projects: the project-scoped tools require project_id, as in 2025.
    expect(tools.find((t: any) => t.name === 'create_article').inputSchema.required).toContain('project_id');

    // Not set up yet: the writer asks for its setup (docs/protocol.md#the-writer-setup-handshake; the client declared no elicitation).
    const setup = await tool('write_article', { project_id: project, brief: 'Bread' });
    expect(setup.structuredContent.status).toBe('setup_required');
    await tool('configure_agent', { project_id: project, agent: 'writer', answers: WRITER_ANSWERS });

    const created = (await tool('create_article', { project_id: project, title: 'Sourdough basics', body: 'Flour, water, salt.' })).structuredContent;
    const read = (await tool('get_article', { project_id: project, id: created.id })).structuredContent;
    expect(read).toMatchObject({ id: created.id, title: 'Sourdough basics', version: 1 });
    const updated = (await tool('update_article', { project_id: project, id: created.id, version: 1, title: 'Sourdough, simply' })).structuredContent;
    expect(updated.version).toBe(2);
    // Another account's project is unknown, in this era too.
    const other = await createTenant(b);
    const refused = await next('tools/call', { name: 'list_articles', arguments: { project_id: other.projectIds[0] } });
    expect(refused.status).toBe(200);
    expect(refused.body.error).toMatchObject({ code: -32602, message: `Unknown project "${other.projectIds[0]}" for this credential.` });

    // A job with progress over SSE on one instance, read back on the other.
    id++;
    const params = { name: 'write_article', arguments: { project_id: project, brief: 'Rye' }, _meta: meta({ progressToken: 'job-1' }) };
    const stream = streamingCall(a, tenant.key, modernBody(id, 'tools/call', params, null), modernHeaders('tools/call', params));
    expect((await stream.response).headers['content-type']).toMatch(/^text\/event-stream/);
    const messages = await stream.done;
    const final = messages.at(-1);
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < progress.length; i++) expect(progress[i].params.progress).toBeGreaterThan(progress[i - 1].params.progress);
    expect(final).toMatchObject({ id, result: { resultType: 'complete', structuredContent: { status: 'succeeded' } } });
    const jobId = final.result.structuredContent.job_id;
    id++;
    const job = expectModernResult(await modern(b, tenant.key, id, 'tools/call', { name: 'get_job', arguments: { job_id: jobId } }), id);
    expect(job.structuredContent).toMatchObject({ id: jobId, status: 'succeeded' });

    // Every call of the client is in its account's log, with the client it named, from both instances.
    const entries = await activity(b, tenant.accountId);
    expect(entries).toHaveLength(id);
    for (const entry of entries) expect(entry).toMatchObject({ client: CLIENT_INFO, session_id: null });
  });
});
