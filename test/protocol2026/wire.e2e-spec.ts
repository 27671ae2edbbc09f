import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { activity, createTenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { streamingCall } from '../support/sse-call.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CLIENT_INFO, expectError, expectModernResult, meta, META_KEYS, MODERN, modern, modernBody, modernHeaders } from '../support/wire2026.js';

// MCP 2026-07-28 beside 2025 on the same POST /mcp (docs/protocol.md#the-2026-07-28-era): the era decided once
// per request, the revision's refusals in order with their HTTP statuses, the modern method table,
// decorated results; a 2025 client on the same server unaffected.
describe('/mcp in both eras: the 2026-07-28 wire', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, [ConformanceFixturesModule]);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('server/discover', () => {
    it('answers the versions (one list with -32022 data.supported), the capabilities the modern table serves, no listChanged/subscribe/logging, caching hints and serverInfo', async () => {
      const { key } = await createTenant(t);
      const result = expectModernResult(await modern(t, key, 1, 'server/discover'), 1);
      expect(result.supportedVersions).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
      // Each capability advertised ⇔ its methods served in this era (resources once that feature is in), with no listChanged or subscribe.
      expect(result.capabilities).toMatchObject({ tools: {}, prompts: {}, completions: {} });
      const probes: Record<string, [string, Record<string, unknown>]> = {
        tools: ['tools/list', {}],
        prompts: ['prompts/list', {}],
        resources: ['resources/list', {}],
        completions: ['completion/complete', { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'x' } }],
        // The tasks extension: tasks/get is served (-32021 here, the extension not declared), not 404.
        extensions: ['tasks/get', {}],
      };
      expect(Object.keys(result.capabilities).filter((name) => !(name in probes))).toEqual([]);
      for (const [name, [method, params]] of Object.entries(probes)) {
        const probe = await modern(t, key, method, method, params);
        expect([name, name in result.capabilities]).toEqual([name, probe.status !== 404]);
        if (name in result.capabilities)
          expect([name, result.capabilities[name]]).toEqual([name, name === 'extensions' ? { 'io.modelcontextprotocol/tasks': {} } : {}]);
      }
      expect(result.instructions).toMatch(/^Reblog MCP server\. Tools act on your articles and projects\./);
      expect(result.instructions).toMatch(/resources .* which you can read and attach\./);
      expect(result.instructions).not.toMatch(/subscribe/);
      expect(result).toMatchObject({ ttlMs: 3_600_000, cacheScope: 'private' });
      // The unsupported-version error lists the same versions.
      const error = expectError(
        await modern(t, key, 2, 'server/discover', {}, { meta: meta({ [META_KEYS.protocolVersion]: 'v9' }), headers: { 'MCP-Protocol-Version': 'v9' } }),
        400,
        -32022,
        2,
      );
      expect(error.data).toEqual({ supported: result.supportedVersions, requested: 'v9' });
    });

    it('is not a 2025 method: -32601 with HTTP 200 in the legacy era', async () => {
      const { key } = await createTenant(t);
      const { sessionId } = await initSession(t, key, '2025-11-25');
      expectError(await rpc(t, key, { jsonrpc: '2.0', id: 3, method: 'server/discover', params: {} }, sessionHeaders(sessionId, '2025-11-25')), 200, -32601, 3);
    });
  });

  describe('results', () => {
    it('tools/list, prompts/list carry resultType, ttlMs and cacheScope private; the same lists as the 2025 era, whose results stay undecorated', async () => {
      const { key } = await createTenant(t, { projects: 2 });
      const { sessionId } = await initSession(t, key, '2025-11-25');
      for (const [i, method] of ['tools/list', 'prompts/list'].entries()) {
        const result = expectModernResult(await modern(t, key, 10 + i, method), 10 + i);
        expect(result).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
        const legacy = await rpc(t, key, { jsonrpc: '2.0', id: 20 + i, method }, sessionHeaders(sessionId, '2025-11-25'));
        expect(legacy.status).toBe(200);
        expect(Object.keys(legacy.body.result)).not.toEqual(expect.arrayContaining(['resultType']));
        for (const field of ['resultType', 'ttlMs', 'cacheScope', '_meta']) expect(legacy.body.result).not.toHaveProperty(field);
        const { resultType: _r, ttlMs: _t, cacheScope: _c, _meta: _m, ...rest } = result;
        expect(rest).toEqual(legacy.body.result);
      }
    });

    it('tools/call, a tool error, prompts/get and completion/complete carry resultType "complete" and no caching hints', async () => {
      const { key } = await createTenant(t);
      const ok = expectModernResult(await modern(t, key, 1, 'tools/call', { name: 'list_projects', arguments: {} }), 1);
      expect(ok.structuredContent.items).toHaveLength(1);
      expect(ok).not.toHaveProperty('ttlMs');
      const failed = expectModernResult(await modern(t, key, 2, 'tools/call', { name: 'test_error_handling', arguments: {} }), 2);
      expect(failed.isError).toBe(true);
      const prompt = expectModernResult(await modern(t, key, 3, 'prompts/get', { name: 'test_simple_prompt' }), 3);
      expect(prompt.messages.length).toBeGreaterThan(0);
      expect(prompt).not.toHaveProperty('cacheScope');
      const completion = expectModernResult(
        await modern(t, key, 4, 'completion/complete', {
          ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
          argument: { name: 'arg1', value: 'x' },
        }),
        4,
      );
      expect(Array.isArray(completion.completion.values)).toBe(true);
    });

    it('method-level refusals stay JSON-RPC errors with HTTP 200 (unknown tool, bad arguments)', async () => {
      const { key } = await createTenant(t);
      expectError(await modern(t, key, 5, 'tools/call', { name: 'no_such_tool', arguments: {} }), 200, -32602, 5);
      expectError(await modern(t, key, 6, 'tools/call', { name: 'list_articles', arguments: { page: { x: 1 } } }), 200, -32602, 6);
    });

    it('progress goes out on the SSE stream with the token, and the final response carries resultType', async () => {
      const { key } = await createTenant(t);
      const params = { name: 'test_tool_with_progress', arguments: {}, _meta: meta({ progressToken: 'p-1' }) };
      const stream = streamingCall(t, key, modernBody(7, 'tools/call', params, null), modernHeaders('tools/call', params));
      const res = await stream.response;
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const messages = await stream.done;
      const progress = messages.filter((m) => m.method === 'notifications/progress');
      expect(progress.map((m) => m.params.progress)).toEqual([0, 0.5, 1]);
      expect(progress.every((m) => m.params.progressToken === 'p-1')).toBe(true);
      // No log messages: the request did not ask for any in _meta.
      expect(messages.filter((m) => m.method === 'notifications/message')).toEqual([]);
      const last = messages.at(-1);
      expect(last.id).toBe(7);
      expect(last.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Progress test completed.' }] });
    });
  });

  describe('refusals, in the order of the revision, each echoing the id', () => {
    let key: string;
    beforeAll(async () => {
      ({ key } = await createTenant(t));
    });

    it('params or _meta missing or malformed → 400, -32602 (before any header check)', async () => {
      const cases: [string, Record<string, unknown> | null][] = [
        ['no _meta', null],
        ['no protocol version', { [META_KEYS.clientCapabilities]: {} }],
        ['a protocol version that is not a string', meta({ [META_KEYS.protocolVersion]: 20260728 })],
        ['no clientCapabilities', { [META_KEYS.protocolVersion]: MODERN }],
        ['clientCapabilities not an object', meta({ [META_KEYS.clientCapabilities]: ['sampling'] })],
        ['a malformed clientInfo', meta({ [META_KEYS.clientInfo]: { name: 'x' } })],
        ['an unknown log level', meta({ [META_KEYS.logLevel]: 'loud' })],
      ];
      for (const [i, [what, metaValue]] of cases.entries()) {
        // With a mismatching Mcp-Method too: -32602 answers first.
        const res = await modern(t, key, 100 + i, 'server/discover', {}, { meta: metaValue, headers: { 'Mcp-Method': 'tools/list' } });
        try {
          expectError(res, 400, -32602, 100 + i);
        } catch (err) {
          throw new Error(`${what}: ${(err as Error).message}`);
        }
      }
      // params that is not an object at all, with the 2026 header: modern (era from the header), -32602.
      expectError(await rpc(t, key, { jsonrpc: '2.0', id: 'p', method: 'tools/list', params: [1] }, modernHeaders('tools/list')), 400, -32602, 'p');
      // clientInfo is optional.
      expectModernResult(
        await modern(t, key, 108, 'server/discover', {}, { meta: { [META_KEYS.protocolVersion]: MODERN, [META_KEYS.clientCapabilities]: {} } }),
        108,
      );
    });

    it("the header must equal _meta's version → 400, -32020; then an unsupported version → 400, -32022 with supported and requested", async () => {
      const v999 = meta({ [META_KEYS.protocolVersion]: 'v999.0.0' });
      expectError(await modern(t, key, 200, 'server/discover', {}, { meta: v999 }), 400, -32020, 200);
      expectError(await modern(t, key, 201, 'server/discover', {}, { headers: { 'MCP-Protocol-Version': '' } }), 400, -32020, 201);
      expectError(await modern(t, key, 202, 'server/discover', {}, { headers: { 'MCP-Protocol-Version': '2025-11-25' } }), 400, -32020, 202);
      const unsupported = expectError(
        await modern(t, key, 203, 'server/discover', {}, { meta: v999, headers: { 'MCP-Protocol-Version': 'v999.0.0' } }),
        400,
        -32022,
        203,
      );
      expect(unsupported.data).toEqual({ supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], requested: 'v999.0.0' });
      // A 2025 version named in _meta: the client picks from the list; 2025 is spoken with initialize.
      const legacy = meta({ [META_KEYS.protocolVersion]: '2025-11-25' });
      expect(
        expectError(await modern(t, key, 204, 'tools/list', {}, { meta: legacy, headers: { 'MCP-Protocol-Version': '2025-11-25' } }), 400, -32022, 204).data
          .requested,
      ).toBe('2025-11-25');
      // Surrounding whitespace in the header is not part of its value.
      expectModernResult(await modern(t, key, 205, 'server/discover', {}, { headers: { 'MCP-Protocol-Version': `  ${MODERN}  ` } }), 205);
    });

    it('Mcp-Method must equal the method → 400, -32020 (trimmed, case-sensitive)', async () => {
      expectError(await modern(t, key, 300, 'tools/list', {}, { headers: { 'Mcp-Method': '' } }), 400, -32020, 300);
      expectError(await modern(t, key, 301, 'tools/list', {}, { headers: { 'Mcp-Method': 'prompts/list' } }), 400, -32020, 301);
      expectError(await modern(t, key, 302, 'tools/list', {}, { headers: { 'Mcp-Method': 'Tools/List' } }), 400, -32020, 302);
      expectModernResult(await modern(t, key, 303, 'tools/list', {}, { headers: { 'Mcp-Method': '  tools/list ' } }), 303);
    });

    it('Mcp-Name must equal the tool or prompt named → 400, -32020; the =?base64?…?= form and surrounding whitespace are accepted; other methods ignore it', async () => {
      const params = { name: 'list_projects', arguments: {} };
      expectError(await modern(t, key, 400, 'tools/call', params, { headers: { 'Mcp-Name': '' } }), 400, -32020, 400);
      expectError(await modern(t, key, 401, 'tools/call', params, { headers: { 'Mcp-Name': 'list_articles' } }), 400, -32020, 401);
      expectError(
        await modern(t, key, 402, 'prompts/get', { name: 'test_simple_prompt' }, { headers: { 'Mcp-Name': 'test_prompt_with_image' } }),
        400,
        -32020,
        402,
      );
      expectModernResult(await modern(t, key, 403, 'tools/call', params, { headers: { 'Mcp-Name': '  list_projects  ' } }), 403);
      expectModernResult(
        await modern(t, key, 404, 'tools/call', params, { headers: { 'Mcp-Name': `=?base64?${Buffer.from('list_projects').toString('base64')}?=` } }),
        404,
      );
      expectError(
        await modern(t, key, 405, 'tools/call', params, { headers: { 'Mcp-Name': `=?base64?${Buffer.from('list_jobs').toString('base64')}?=` } }),
        400,
        -32020,
        405,
      );
      expectModernResult(await modern(t, key, 406, 'tools/list', {}, { headers: { 'Mcp-Name': 'anything' } }), 406);
    });

    it('methods outside the 2026 table are HTTP 404 + -32601, removed ones included; the 2025 era keeps them', async () => {
      const removed = [
        'initialize',
        'ping',
        'logging/setLevel',
        'resources/subscribe',
        'resources/unsubscribe',
        'subscriptions/listen',
        'tasks/list',
        'unknown/method',
      ];
      for (const [i, method] of removed.entries()) {
        const error = expectError(await modern(t, key, 500 + i, method, method === 'logging/setLevel' ? { level: 'info' } : {}), 404, -32601, 500 + i);
        expect(error.message).toContain(method);
      }
      const { sessionId } = await initSession(t, key, '2025-11-25');
      const ping = await rpc(t, key, { jsonrpc: '2.0', id: 9, method: 'ping' }, sessionHeaders(sessionId, '2025-11-25'));
      expect(ping.body).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
      expectError(await rpc(t, key, { jsonrpc: '2.0', id: 10, method: 'unknown/method' }, sessionHeaders(sessionId, '2025-11-25')), 200, -32601, 10);
    });

    it("-32021 is HTTP 400 with data.requiredCapabilities, read from this request's _meta only", async () => {
      const params = { name: 'test_missing_capability', arguments: {} };
      const error = expectError(await modern(t, key, 600, 'tools/call', params), 400, -32021, 600);
      expect(error.data).toEqual({ requiredCapabilities: { sampling: {} } });
      const ok = expectModernResult(await modern(t, key, 601, 'tools/call', params, { meta: meta({ [META_KEYS.clientCapabilities]: { sampling: {} } }) }), 601);
      expect(ok.content).toEqual([{ type: 'text', text: 'Success' }]);
      // The declaration of one request does not carry over to the next.
      expectError(await modern(t, key, 602, 'tools/call', params), 400, -32021, 602);
    });

    it('a notification is 202 with no body (none is acted on); GET and DELETE with the 2026 header are 405 Allow: POST', async () => {
      const note = await rpc(t, key, modernBody(undefined, 'notifications/cancelled', { requestId: 1 }), modernHeaders('notifications/cancelled'));
      expect(note.status).toBe(202);
      expect(note.text).toBe('');
      const get = await t.http.get('/mcp').set('Authorization', `Bearer ${key}`).set('MCP-Protocol-Version', MODERN).set('Accept', 'text/event-stream');
      expect(get.status).toBe(405);
      expect(get.headers.allow).toBe('POST');
      const del = await t.http.delete('/mcp').set('Authorization', `Bearer ${key}`).set('MCP-Protocol-Version', MODERN).set('Mcp-Session-Id', 'whatever');
      expect(del.status).toBe(405);
      expect(del.headers.allow).toBe('POST');
      expect(del.body.error.code).toEqual(expect.any(Number));
    });

    it('a body that is not JSON, with the 2026 header, is -32700 (the envelope answers, not the _meta check)', async () => {
      const res = await rpc(t, key, '{oops', modernHeaders('tools/list'));
      expectError(res, 400, -32700, null);
    });

    it('without a credential the 2026 request is 401 before any of its checks', async () => {
      const res = await modern(t, null, 700, 'server/discover', {}, { meta: null });
      expect(res.status).toBe(401);
      expect(res.body.id).toBe(700);
    });
  });

  describe('mixing eras', () => {
    it('a 2025 session id with 2026 headers and _meta is refused: 400, -32600, naming both eras — the session itself keeps working', async () => {
      const { key } = await createTenant(t);
      const { sessionId } = await initSession(t, key, '2025-11-25');
      const mixed = await modern(t, key, 800, 'tools/list', {}, { headers: { 'Mcp-Session-Id': sessionId } });
      const error = expectError(mixed, 400, -32600, 800);
      expect(error.message).toContain('Mcp-Session-Id');
      expect(error.message).toContain('2026-07-28');
      expect(error.message).toContain('2025-11-25');
      // 2026 _meta over a 2025 header and the session: the _meta names the era, same refusal.
      expectError(
        await modern(t, key, 801, 'tools/list', {}, { headers: { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' } }),
        400,
        -32600,
        801,
      );
      // An unknown session id with 2026 headers: the era's refusal, not the session's 404.
      expectError(await modern(t, key, 802, 'tools/list', {}, { headers: { 'Mcp-Session-Id': 'nope' } }), 400, -32600, 802);
      const still = await rpc(t, key, { jsonrpc: '2.0', id: 803, method: 'tools/list' }, sessionHeaders(sessionId, '2025-11-25'));
      expect(still.status).toBe(200);
      expect(still.body.result.tools.length).toBeGreaterThan(0);
    });

    it('a 2025 session with a 2025 request carrying other _meta keys (progressToken) stays legacy', async () => {
      const { key } = await createTenant(t);
      const { sessionId } = await initSession(t, key, '2025-11-25');
      const res = await rpc(
        t,
        key,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {}, _meta: { progressToken: 't' } } },
        sessionHeaders(sessionId, '2025-11-25'),
      );
      expect(res.status).toBe(200);
      expect(res.body.result).not.toHaveProperty('resultType');
    });

    it('the SDK 2025 client and raw 2026 requests of one credential interleave on the same server', async () => {
      const { key } = await createTenant(t);
      const client = await connectClient(t, key, 'sdk-2025');
      const before = await client.listTools();
      expectModernResult(await modern(t, key, 1, 'tools/call', { name: 'list_projects', arguments: {} }), 1);
      const after = await client.listTools();
      expect(after.tools.map((tool) => tool.name)).toEqual(before.tools.map((tool) => tool.name));
      await expect(client.ping()).resolves.toEqual({});
      await client.close();
    });
  });

  describe('logging by _meta', () => {
    it('no notifications/message without _meta logLevel; with it, messages at or above it on the SSE stream, then the result', async () => {
      const { key } = await createTenant(t);
      const params = { name: 'test_logging_tool', arguments: {} };
      const quiet = streamingCall(t, key, modernBody(1, 'tools/call', params), modernHeaders('tools/call', params));
      expect((await quiet.response).headers['content-type']).toMatch(/^application\/json/);
      const [only] = await quiet.done;
      expect(only.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Logging tool completed' }] });

      const asked = streamingCall(t, key, modernBody(2, 'tools/call', params, meta({ [META_KEYS.logLevel]: 'info' })), modernHeaders('tools/call', params));
      const messages = await asked.done;
      expect(messages.map((m) => m.method ?? 'response')).toEqual(['notifications/message', 'response']);
      expect(messages[0].params).toMatchObject({ level: 'info', data: 'Logging tool ran' });
      expect(messages[1].result.resultType).toBe('complete');

      // Below the level asked for: nothing to send before the answer, which stays plain JSON.
      const above = await modern(t, key, 3, 'tools/call', params, { meta: meta({ [META_KEYS.logLevel]: 'error' }) });
      expect(above.headers['content-type']).toMatch(/^application\/json/);
      expectModernResult(above, 3);
    });

    it("a 2025 session's logging/setLevel does not reach 2026 requests of the same credential", async () => {
      const { key } = await createTenant(t);
      const { sessionId } = await initSession(t, key, '2025-11-25');
      const set = await rpc(t, key, { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } }, sessionHeaders(sessionId, '2025-11-25'));
      expect(set.status).toBe(200);
      const params = { name: 'test_tool_with_logging', arguments: {} };
      const call2026 = await modern(t, key, 2, 'tools/call', params);
      expect(call2026.headers['content-type']).toMatch(/^application\/json/);
      expect(expectModernResult(call2026, 2).content).toEqual([{ type: 'text', text: 'Tool with logging executed successfully' }]);
      // The session itself gets its messages.
      const legacy = streamingCall(t, key, { jsonrpc: '2.0', id: 3, method: 'tools/call', params }, sessionHeaders(sessionId, '2025-11-25'));
      expect((await legacy.done).filter((m) => m.method === 'notifications/message')).toHaveLength(3);
    });
  });

  describe('activity log', () => {
    it('records 2026 requests with the client named in _meta, no session; without clientInfo, no client; refusals too', async () => {
      const tenant = await createTenant(t);
      await modern(t, tenant.key, 1, 'tools/call', { name: 'list_projects', arguments: {} });
      await modern(t, tenant.key, 2, 'tools/list', {}, { meta: { [META_KEYS.protocolVersion]: MODERN, [META_KEYS.clientCapabilities]: {} } });
      await modern(t, tenant.key, 3, 'ping');
      await modern(t, tenant.key, 4, 'tools/list', {}, { headers: { 'Mcp-Method': 'prompts/list' } });
      const entries = (await activity(t, tenant.accountId)).reverse();
      expect(entries.map((e) => [e.method, e.tool, e.outcome, e.client, e.session_id, e.error?.code ?? null])).toEqual([
        ['tools/call', 'list_projects', 'ok', CLIENT_INFO, null, null],
        ['tools/list', null, 'ok', null, null, null],
        ['ping', null, 'invalid', CLIENT_INFO, null, -32601],
        // Refused before its _meta was accepted: no client is known yet.
        ['tools/list', null, 'invalid', null, null, -32020],
      ]);
    });
  });
});

describe('/mcp 2026-07-28: the rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_SECOND: '3' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts 2026 requests like any: 3 start, 3 wait for a slot, the rest get 429 with JSON-RPC code 429 (not -32029, in the range the revision reserves), recorded with their _meta client', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => modern(t, tenant.key, i, 'tools/list')));
    const refused = answers.filter((res) => res.status === 429);
    expect(refused).toHaveLength(2);
    for (const res of refused) {
      const error = expectError(res, 429, 429, answers.indexOf(res));
      expect(error).toEqual({
        code: 429,
        message: 'Rate limit exceeded: 3 requests per second for this credential. Retry after 1 s.',
        data: { retry_after_ms: expect.any(Number) },
      });
      expect(error.data.retry_after_ms).toBeGreaterThanOrEqual(1);
      expect(error.data.retry_after_ms).toBeLessThanOrEqual(1_000);
      expect(res.headers['retry-after']).toBe('1');
    }
    // Folded into one entry per second (two if the burst straddles one), each naming the client.
    const limited = await activity(t, tenant.accountId, 'outcome=rate_limited');
    expect(limited.reduce((n, e) => n + e.count, 0)).toBe(2);
    for (const e of limited) expect([e.method, e.client, e.session_id]).toEqual(['tools/list', CLIENT_INFO, null]);
    for (const res of answers.filter((r) => r.status !== 429)) expect(res.body.result.resultType).toBe('complete');
  });
});
