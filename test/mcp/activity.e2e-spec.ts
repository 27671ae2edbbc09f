import { activity, admin, ISO, MISSING_ID, newAccountWithProjects, newKey, UUID, withRole } from '../support/fixtures.js';
import { call, connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The activity log (docs/protocol.md#activity-log), with the clientInfo of initialize
// (docs/protocol.md#initialize): one entry per /mcp request that names a valid credential.
describe('/mcp activity log', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** An account with two projects (list_articles disabled in the second) and one owner key on both. */
  async function setup() {
    const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Open' }, { name: 'Locked', disabled_tools: ['list_articles'] }]);
    const { key, id } = await newKey(t, accountId, withRole(projectIds, 'owner'), ['read'], 'activity key');
    return { accountId, projectIds, key, keyId: id };
  }

  it('initialize records clientInfo (outcome ok, method initialize) and every later call of the session carries it', async () => {
    const { accountId, projectIds, key, keyId } = await setup();
    const { sessionId } = await initSession(t, key, '2025-06-18', { name: 'my-agent', version: '1.0.0' });
    const headers = sessionHeaders(sessionId);
    await rpc(t, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    await rpc(t, key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    await rpc(t, key, call(3, 'list_articles', { project_id: projectIds[0] }), headers);
    await rpc(t, key, { jsonrpc: '2.0', id: 4, method: 'ping' }, headers);

    const entries = (await activity(t, accountId)).reverse();
    expect(entries.map((e) => e.method)).toEqual(['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'ping']);
    for (const entry of entries) {
      expect(entry).toEqual({
        id: expect.stringMatching(UUID),
        at: expect.stringMatching(ISO),
        credential: { type: 'api_key', id: keyId, name: 'activity key' },
        client: { name: 'my-agent', version: '1.0.0' },
        session_id: sessionId,
        method: expect.any(String),
        tool: entry.method === 'tools/call' ? 'list_articles' : null,
        project_id: entry.method === 'tools/call' ? projectIds[0] : null,
        outcome: 'ok',
        error: null,
        duration_ms: expect.any(Number),
        count: 1,
        request_id: expect.stringMatching(UUID),
      });
      expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(entries[3]).toEqual(expect.objectContaining({ tool: 'list_articles', project_id: projectIds[0] }));
  });

  it('the official SDK client is recorded with its clientInfo on every call', async () => {
    const { accountId, key } = await setup();
    const client = await connectClient(t, key, 'sdk-agent');
    await client.listTools();
    await client.callTool({ name: 'list_projects', arguments: {} });
    await client.close();
    const entries = await activity(t, accountId);
    expect(entries.length).toBeGreaterThanOrEqual(4);
    for (const entry of entries) {
      expect(entry.client).toEqual({ name: 'sdk-agent', version: '1.2.3' });
      expect(entry.session_id).toEqual(expect.any(String));
    }
    // The SDK also tries GET for a server stream within its session: recorded with its client too.
    expect(entries.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']));
    expect(entries.find((e) => e.method === 'tools/call')).toEqual(expect.objectContaining({ tool: 'list_projects', project_id: null, outcome: 'ok' }));
  });

  it('requests without a session are recorded with no client and no session', async () => {
    const { accountId, key } = await setup();
    await rpc(t, key, { jsonrpc: '2.0', id: 1, method: 'ping' });
    const [entry] = await activity(t, accountId);
    expect(entry).toEqual(expect.objectContaining({ method: 'ping', client: null, session_id: null, outcome: 'ok' }));
  });

  it('every request with a valid credential adds exactly one entry, refusals included, with the right outcome', async () => {
    const { accountId, projectIds, key } = await setup();
    const { sessionId } = await initSession(t, key);
    const auth = { Authorization: `Bearer ${key}` };
    const requests: [string, () => Promise<unknown>, Record<string, unknown>][] = [
      ['ping', () => rpc(t, key, { jsonrpc: '2.0', id: 1, method: 'ping' }), { method: 'ping', outcome: 'ok' }],
      ['tools/list', () => rpc(t, key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }), { method: 'tools/list', outcome: 'ok' }],
      [
        'a call',
        () => rpc(t, key, call(3, 'list_articles', { project_id: projectIds[0] })),
        { method: 'tools/call', tool: 'list_articles', project_id: projectIds[0], outcome: 'ok' },
      ],
      [
        'a tool error',
        () => rpc(t, key, call(4, 'get_article', { project_id: projectIds[0], id: MISSING_ID })),
        { method: 'tools/call', tool: 'get_article', project_id: projectIds[0], outcome: 'tool_error' },
      ],
      [
        'a disabled tool',
        () => rpc(t, key, call(5, 'list_articles', { project_id: projectIds[1] })),
        { method: 'tools/call', tool: 'list_articles', project_id: projectIds[1], outcome: 'denied' },
      ],
      [
        'a schema violation',
        () => rpc(t, key, call(6, 'list_articles', { project_id: projectIds[0], page_size: 1000 })),
        { method: 'tools/call', tool: 'list_articles', outcome: 'invalid' },
      ],
      [
        'the argument guard',
        () => rpc(t, key, call(7, 'get_article', { handle: { $ne: null } })),
        { method: 'tools/call', tool: 'get_article', outcome: 'invalid', error: { code: -32602, message: 'Invalid value for "handle": expected a string.' } },
      ],
      [
        'an unknown project',
        () => rpc(t, key, call(8, 'list_articles', { project_id: 'nope' })),
        { method: 'tools/call', outcome: 'invalid', error: expect.objectContaining({ code: -32602 }) },
      ],
      [
        'an unknown tool',
        () => rpc(t, key, call(9, 'nope', {})),
        { method: 'tools/call', tool: 'nope', outcome: 'invalid', error: { code: -32602, message: 'Unknown tool: nope' } },
      ],
      [
        'an unknown method',
        () => rpc(t, key, { jsonrpc: '2.0', id: 10, method: 'resources/lists' }),
        { method: 'resources/lists', outcome: 'invalid', error: expect.objectContaining({ code: -32601 }) },
      ],
      [
        'an unknown session',
        () => rpc(t, key, { jsonrpc: '2.0', id: 11, method: 'ping' }, { 'Mcp-Session-Id': 'gone' }),
        { method: 'ping', outcome: 'invalid', error: expect.objectContaining({ code: -32001 }) },
      ],
      [
        'an unsupported version',
        () => rpc(t, key, { jsonrpc: '2.0', id: 12, method: 'ping' }, { 'MCP-Protocol-Version': '1999-01-01' }),
        { method: 'ping', outcome: 'invalid', error: expect.objectContaining({ code: -32600 }) },
      ],
      ['malformed JSON', () => rpc(t, null, '{nope', auth), { outcome: 'invalid', error: expect.objectContaining({ code: -32700 }) }],
      ['a batch', () => rpc(t, key, [{ jsonrpc: '2.0', id: 13, method: 'ping' }]), { outcome: 'invalid', error: expect.objectContaining({ code: -32600 }) }],
      ['a notification', () => rpc(t, key, { jsonrpc: '2.0', method: 'notifications/initialized' }), { method: 'notifications/initialized', outcome: 'ok' }],
      ['a client response', () => rpc(t, key, { jsonrpc: '2.0', id: 'x', result: {} }), { outcome: 'ok' }],
      ['GET', () => t.http.get('/mcp').set(auth), { method: 'GET', outcome: 'invalid' }],
      [
        'DELETE',
        () => t.http.delete('/mcp').set(auth).set('Mcp-Session-Id', sessionId),
        { method: 'DELETE', session_id: sessionId, client: { name: 'raw-agent', version: '9.9.9' }, outcome: 'ok' },
      ],
      [
        'DELETE again',
        () => t.http.delete('/mcp').set(auth).set('Mcp-Session-Id', sessionId),
        { method: 'DELETE', outcome: 'invalid', error: expect.objectContaining({ code: -32001 }) },
      ],
    ];
    let before = (await activity(t, accountId)).length;
    for (const [name, send, expected] of requests) {
      await send();
      const entries = await activity(t, accountId);
      if (entries.length !== before + 1) throw new Error(`${name}: expected one new entry, got ${entries.length - before}`);
      before = entries.length;
      expect({ name, ...entries[0] }).toEqual(expect.objectContaining({ name, count: 1, ...expected }));
    }
    const all = await activity(t, accountId);
    expect(all.reduce((n, e) => n + e.count, 0)).toBe(requests.length + 1);
  });

  it("DELETE /mcp is recorded with the session's client, so filtering by client finds the whole session, its end included", async () => {
    const { accountId, key } = await setup();
    const { sessionId } = await initSession(t, key, '2025-06-18', { name: 'codex-like', version: '0.9.0' });
    await rpc(t, key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionHeaders(sessionId));
    expect((await t.http.delete('/mcp').set('Authorization', `Bearer ${key}`).set('Mcp-Session-Id', sessionId)).status).toBe(204);
    const entries = (await activity(t, accountId, 'client_name=codex-like')).reverse();
    expect(entries.map((e) => [e.method, e.session_id, e.client])).toEqual([
      ['initialize', sessionId, { name: 'codex-like', version: '0.9.0' }],
      ['tools/list', sessionId, { name: 'codex-like', version: '0.9.0' }],
      ['DELETE', sessionId, { name: 'codex-like', version: '0.9.0' }],
    ]);
  });

  it('concurrent requests are each recorded once, none lost', async () => {
    const { accountId, projectIds, key } = await setup();
    const sent = 24;
    const answers = await Promise.all(
      Array.from({ length: sent }, (_, i) =>
        i % 3 === 0 ? rpc(t, key, { jsonrpc: '2.0', id: i, method: 'ping' }) : rpc(t, key, call(i, 'list_articles', { project_id: projectIds[i % 2] })),
      ),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const entries = await activity(t, accountId);
    expect(entries).toHaveLength(sent);
    expect(entries.reduce((n, e) => n + e.count, 0)).toBe(sent);
    expect(new Set(entries.map((e) => e.id)).size).toBe(sent);
  });

  it('requests that name no valid credential, and requests refused for size or Origin, add none', async () => {
    const { accountId, projectIds, key } = await setup();
    const revoked = await newKey(t, accountId, [{ project_id: projectIds[0], role: 'viewer' }], ['read']);
    await rpc(t, revoked.key, { jsonrpc: '2.0', id: 1, method: 'ping' });
    await admin(t, 'delete', `/admin/v1/api-keys/${revoked.id}`, undefined, 204);
    const before = (await activity(t, accountId)).length;
    expect(before).toBe(1);

    expect((await rpc(t, revoked.key, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(401);
    expect((await rpc(t, null, { jsonrpc: '2.0', id: 3, method: 'ping' })).status).toBe(401);
    expect((await rpc(t, key, { jsonrpc: '2.0', id: 4, method: 'ping' }, { Origin: 'https://evil.example' })).status).toBe(403);
    expect((await rpc(t, key, { jsonrpc: '2.0', id: 5, method: 'ping' }, { Host: 'evil.example' })).status).toBe(403);
    expect((await rpc(t, null, 'x'.repeat(1024 * 1024 + 1), { Authorization: `Bearer ${key}` })).status).toBe(413);
    expect((await t.http.get('/mcp')).status).toBe(401);

    expect(await activity(t, accountId)).toHaveLength(before);
  });

  it('is visible through the admin API with filters: outcome, method, tool, credential_id', async () => {
    const { accountId, projectIds, key, keyId } = await setup();
    const other = await newKey(t, accountId, [{ project_id: projectIds[0], role: 'viewer' }], ['read'], 'second key');
    await rpc(t, key, call(1, 'list_projects', {}));
    await rpc(t, key, call(2, 'get_article', { project_id: projectIds[0], id: MISSING_ID }));
    await rpc(t, key, call(3, 'list_articles', { project_id: projectIds[1] }));
    await rpc(t, other.key, { jsonrpc: '2.0', id: 4, method: 'ping' });
    await rpc(t, other.key, call(5, 'list_articles', {}));

    expect((await activity(t, accountId)).length).toBe(5);
    expect((await activity(t, accountId, 'outcome=tool_error')).map((e) => e.tool)).toEqual(['get_article']);
    expect((await activity(t, accountId, 'outcome=denied')).map((e) => e.project_id)).toEqual([projectIds[1]]);
    expect((await activity(t, accountId, 'method=ping')).map((e) => e.credential.name)).toEqual(['second key']);
    expect((await activity(t, accountId, 'tool=list_articles')).map((e) => e.credential.id)).toEqual([other.id, keyId]);
    expect((await activity(t, accountId, `credential_id=${other.id}`)).map((e) => e.method)).toEqual(['tools/call', 'ping']);
    expect(await activity(t, accountId, 'outcome=rate_limited')).toEqual([]);
  });
});
