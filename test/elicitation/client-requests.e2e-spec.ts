import { ClientRequestsRepository } from '../../src/mcp/client-requests.repository.js';
import { createDatabase, eventually, withClient, type TestDatabase } from '../support/database.js';
import { createTenant } from '../support/fixtures.js';
import { rpc, toolJson } from '../support/mcp-client.js';
import { streamingCall } from '../support/sse-call.js';
import type { TestApp } from '../support/test-app.js';
import { articleLive, newArticle, pendingRequests, rawSession, respond, toolCall } from './elicitation-helpers.js';

/**
 * Server→client requests over raw HTTP: the request goes out on the call's event stream of one
 * instance, and the client's answer may reach any instance (Postgres + LISTEN/NOTIFY).
 */
describe('elicitation/create across instances (raw HTTP)', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  /** Waits only 1.5 s for the client's answer. */
  let quick: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    a = await db.app();
    b = await db.app({ ROLE: 'api' });
    quick = await db.app({ ROLE: 'api', CLIENT_REQUEST_TIMEOUT_MS: '1500' });
  });
  afterAll(() => db?.drop());

  /** Starts delete_article on `on` and reads the elicitation request it sends first. */
  async function startDelete(on: TestApp, key: string, headers: Record<string, string>, articleId: string, id: number | string = 1) {
    const call = streamingCall(on, key, toolCall(id, 'delete_article', { id: articleId }), headers);
    const res = await call.response;
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const request = await call.next();
    return { call, request };
  }

  it('the request arrives on instance A’s stream, the answer POSTed to instance B finishes the call on A', async () => {
    const tenant = await createTenant(a);
    const article = await newArticle(a, tenant.key);
    const { sessionId, headers } = await rawSession(a, tenant.key);
    const { call, request } = await startDelete(a, tenant.key, headers, article.id, 'del-1');
    expect(request).toEqual({
      jsonrpc: '2.0',
      id: expect.stringMatching(/^srv-[A-Za-z0-9_-]{24}$/),
      method: 'elicitation/create',
      params: {
        message: expect.stringContaining(`"${article.title}"`),
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', title: expect.any(String), description: expect.any(String), default: false } },
          required: ['confirm'],
        },
      },
    });
    expect(await pendingRequests(db.url, sessionId)).toHaveLength(1);
    const sent = Date.now();
    const answered = await respond(b, tenant.key, headers, request.id, { result: { action: 'accept', content: { confirm: true } } });
    expect(answered.status).toBe(202);
    expect(answered.text).toBe('');
    const messages = await call.done;
    // Woken by the notification, not by the 5-second poll.
    expect(Date.now() - sent).toBeLessThan(3_000);
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ jsonrpc: '2.0', id: 'del-1', result: { structuredContent: { deleted: true, id: article.id } } });
    expect(await articleLive(a, tenant.key, article.id)).toBe(false);
    // The row is gone once the call ended.
    expect(await pendingRequests(db.url, sessionId)).toEqual([]);
  });

  it('answers of another session, another credential, or to an unknown id change nothing; the right one still counts', async () => {
    const tenant = await createTenant(a);
    const article = await newArticle(a, tenant.key);
    const { headers } = await rawSession(a, tenant.key);
    const { call, request } = await startDelete(a, tenant.key, headers, article.id);
    const yes = { result: { action: 'accept', content: { confirm: true } } };

    // Another session of the same credential.
    const other = await rawSession(b, tenant.key);
    expect((await respond(b, tenant.key, other.headers, request.id, yes)).status).toBe(202);
    // No session at all.
    expect((await rpc(b, tenant.key, { jsonrpc: '2.0', id: request.id, ...yes })).status).toBe(202);
    // Another account's credential, in its own session.
    const stranger = await createTenant(a);
    const strangerSession = await rawSession(b, stranger.key);
    expect((await respond(b, stranger.key, strangerSession.headers, request.id, yes)).status).toBe(202);
    // The right session, but an id the server never sent.
    expect((await respond(b, tenant.key, headers, 'srv-unknownunknownunknownun', yes)).status).toBe(202);
    expect((await respond(b, tenant.key, headers, 42 as unknown as string, yes)).status).toBe(202);

    await new Promise((r) => setTimeout(r, 300));
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
    // The call still waits for its own client's answer: a no.
    expect((await respond(b, tenant.key, headers, request.id, { result: { action: 'accept', content: { confirm: false } } })).status).toBe(202);
    const messages = await call.done;
    const last = messages[messages.length - 1];
    expect(last.result.isError).toBe(true);
    expect(toolJson(last.result).error).toEqual({ code: 'not_confirmed', message: expect.stringContaining('did not confirm') });
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
    // A second answer to the same request, after the call ended, changes nothing either.
    expect((await respond(b, tenant.key, headers, request.id, yes)).status).toBe(202);
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
  });

  it('times out: notifications/cancelled for its request on the stream, then the tool error "timeout"; a late answer is ignored', async () => {
    const tenant = await createTenant(quick);
    const article = await newArticle(quick, tenant.key);
    const { sessionId, headers } = await rawSession(quick, tenant.key);
    const started = Date.now();
    const { call, request } = await startDelete(quick, tenant.key, headers, article.id);
    const cancelled = await call.next(10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(cancelled).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason: expect.any(String) } });
    const messages = await call.done;
    expect(toolJson(messages[messages.length - 1].result).error).toEqual({
      code: 'timeout',
      message: expect.stringContaining('did not answer elicitation/create within 1.5 s'),
    });
    expect((await respond(a, tenant.key, headers, request.id, { result: { action: 'accept', content: { confirm: true } } })).status).toBe(202);
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
    expect(await pendingRequests(db.url, sessionId)).toEqual([]);
  });

  it('notifications/cancelled for the call, sent to another instance, stops the wait; nothing is deleted', async () => {
    const tenant = await createTenant(a);
    const article = await newArticle(a, tenant.key);
    const { headers } = await rawSession(a, tenant.key);
    const { call } = await startDelete(a, tenant.key, headers, article.id, 'call-9');
    const sent = await rpc(
      b,
      tenant.key,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-9', reason: 'changed my mind' } },
      headers,
    );
    expect(sent.status).toBe(202);
    const messages = await call.done;
    const last = messages[messages.length - 1];
    expect(last.id).toBe('call-9');
    expect(toolJson(last.result).error).toEqual({ code: 'invalid_state', message: expect.stringContaining('while waiting for the client') });
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
  });

  it('a client that disconnects stops the wait: its request row is removed and nothing is deleted', async () => {
    const tenant = await createTenant(a);
    const article = await newArticle(a, tenant.key);
    const { sessionId, headers } = await rawSession(a, tenant.key);
    const { call } = await startDelete(a, tenant.key, headers, article.id);
    expect(await pendingRequests(db.url, sessionId)).toHaveLength(1);
    call.abort();
    await eventually(
      () => pendingRequests(db.url, sessionId),
      (rows) => rows.length === 0,
      10_000,
    );
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
  });

  it('ending the session (DELETE on another instance) stops the wait at once; nothing is deleted', async () => {
    const tenant = await createTenant(a);
    const article = await newArticle(a, tenant.key);
    const { headers } = await rawSession(a, tenant.key);
    const { call } = await startDelete(a, tenant.key, headers, article.id);
    const ended = Date.now();
    await b.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set(headers).expect(204);
    const messages = await call.done;
    // Woken by the session's notification, not by the 5-second poll.
    expect(Date.now() - ended).toBeLessThan(3_000);
    expect(toolJson(messages[messages.length - 1].result).error).toEqual({ code: 'invalid_state', message: expect.stringContaining('session ended') });
    expect(await articleLive(a, tenant.key, article.id)).toBe(true);
  });

  it('a client’s JSON-RPC error or a malformed result is a tool error, and nothing is deleted', async () => {
    const tenant = await createTenant(a);
    const { headers } = await rawSession(a, tenant.key);
    for (const answer of [
      { error: { code: -32601, message: 'Method not found' } },
      { result: { action: 'maybe' } },
      { result: { action: 'accept', content: 'yes' } },
      { result: 'yes' },
    ]) {
      const article = await newArticle(a, tenant.key, `Article ${JSON.stringify(answer)}`);
      const { call, request } = await startDelete(a, tenant.key, headers, article.id);
      expect((await respond(b, tenant.key, headers, request.id, answer)).status).toBe(202);
      const messages = await call.done;
      const error = toolJson(messages[messages.length - 1].result).error;
      expect(error.code).toBe('unavailable');
      expect(await articleLive(a, tenant.key, article.id)).toBe(true);
    }
  });

  it('without the capability, without a session, or without text/event-stream, delete_article deletes at once, unasked', async () => {
    const tenant = await createTenant(a);
    const noCapability = await rawSession(a, tenant.key, { sampling: {} });
    const urlOnly = await rawSession(a, tenant.key, { elicitation: { url: {} } });
    const capable = await rawSession(a, tenant.key);
    const cases: Record<string, string>[] = [
      noCapability.headers,
      urlOnly.headers,
      { 'MCP-Protocol-Version': '2025-11-25' },
      { ...capable.headers, Accept: 'application/json' },
    ];
    for (const headers of cases) {
      const article = await newArticle(a, tenant.key, `Gone ${Object.values(headers).join(' ')}`);
      const res = await rpc(a, tenant.key, toolCall(5, 'delete_article', { id: article.id }), headers);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.result.structuredContent).toEqual({ deleted: true, id: article.id });
    }
  });

  it('an unknown article is refused before anyone is asked', async () => {
    const tenant = await createTenant(a);
    const { headers } = await rawSession(a, tenant.key);
    const res = await rpc(a, tenant.key, toolCall(6, 'delete_article', { id: '00000000-0000-4000-8000-000000000000' }), headers);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(toolJson(res.body.result).error.code).toBe('not_found');
  });

  it('initialize keeps the known capability keys only, each bounded', async () => {
    const tenant = await createTenant(a);
    const { sessionId } = await rawSession(a, tenant.key, {
      elicitation: { form: {} },
      sampling: { note: 'x'.repeat(5_000) },
      roots: 'yes',
      somethingElse: { a: 1 },
      experimental: { feature: { on: true } },
    });
    const stored = await withClient(
      db.url,
      async (c) => (await c.query('SELECT client_capabilities, log_level FROM mcp_sessions WHERE id = $1', [sessionId])).rows[0],
    );
    expect(stored).toEqual({ client_capabilities: { elicitation: { form: {} }, sampling: {}, experimental: { feature: { on: true } } }, log_level: null });
  });

  it('rows whose waiter is gone are purged a minute after they expired', async () => {
    const tenant = await createTenant(a);
    const { sessionId } = await rawSession(a, tenant.key);
    await withClient(db.url, (c) =>
      c.query(
        `INSERT INTO mcp_client_requests (id, session_id, credential_id, method, expires_at) VALUES
           ('srv-old', $1, $2, 'elicitation/create', now() - interval '2 minutes'),
           ('srv-recent', $1, $2, 'elicitation/create', now() - interval '10 seconds'),
           ('srv-live', $1, $2, 'elicitation/create', now() + interval '2 minutes')`,
        [sessionId, tenant.keyId],
      ),
    );
    expect(await a.app.get(ClientRequestsRepository).purge(60, 500)).toBe(1);
    expect((await pendingRequests(db.url, sessionId)).map((r) => r.id).sort()).toEqual(['srv-live', 'srv-recent']);
  });
});
