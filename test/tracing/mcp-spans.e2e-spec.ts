import request from 'supertest';
import { DataSource } from 'typeorm';
import { flushTelemetry, shutdownTelemetry, startTelemetry } from '../../src/common/telemetry.js';
import { SessionsService } from '../../src/mcp/sessions.service.js';
import { MCP_DURATION_BUCKETS } from '../../src/metrics/metrics.service.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { call, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startRedis } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { meta, modern } from '../support/wire2026.js';

const SERVER = 2;
const CLIENT = 3;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const GATEWAY_TRACE = '0af7651916cd43dd8448eb211c80319c';
const GATEWAY_SPAN = 'b7ad6b7169203331';
const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;

/**
 * The SERVER span of each /mcp request, exported over OTLP/HTTP (JSON) to a real receiver: its name and
 * attributes follow the MCP semantic conventions; its parent is `params._meta`'s trace context, else
 * the gateway's `traceparent` header (a link when both are there).
 */
describe('tracing: one SERVER span per /mcp request', () => {
  let receiver: OtlpReceiver;
  let t: TestApp;
  let tenant: Tenant;
  const saved = { ...process.env };

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    process.env.OTEL_SERVICE_NAME = 'reblog-under-test';
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=test';
    await expect(startTelemetry()).resolves.toBe(true);
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await shutdownTelemetry();
    await receiver?.close();
    process.env = saved;
  });

  /** The exported server span whose `jsonrpc.request.id` is `id`. */
  async function spanOf(id: string): Promise<ReceivedSpan> {
    await flushTelemetry();
    const spans = receiver.spans.filter((s) => s.kind === SERVER && s.attributes['jsonrpc.request.id'] === id);
    expect(spans).toHaveLength(1);
    return spans[0];
  }

  it('a tools/call with a traceparent in _meta: that span is its parent, the gateway header a link', async () => {
    const body = call('traced-1', 'list_projects', {});
    const res = await rpc(
      t,
      tenant.key,
      { ...body, params: { ...body.params, _meta: { traceparent: traceparent(CLIENT_TRACE, CLIENT_SPAN), tracestate: 'rojo=00f067aa0ba902b7' } } },
      { traceparent: traceparent(GATEWAY_TRACE, GATEWAY_SPAN), 'X-Request-Id': 'gw-span-1' },
    );
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBeFalsy();
    const span = await spanOf('traced-1');
    expect(span).toMatchObject({ name: 'tools/call list_projects', traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    expect(span.links).toEqual([expect.objectContaining({ traceId: GATEWAY_TRACE, spanId: GATEWAY_SPAN })]);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'list_projects',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': 'traced-1',
      'client.address': '127.0.0.1',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'network.protocol.version': '1.1',
      'reblog.request.id': 'gw-span-1',
      'reblog.account.id': tenant.accountId,
      'reblog.credential.id': tenant.keyId,
      'reblog.credential.type': 'api_key',
      'reblog.outcome': 'ok',
    });
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.resource).toMatchObject({ 'service.name': 'reblog-under-test', 'deployment.environment.name': 'test' });
    // Never a secret, never the tool's arguments.
    expect(JSON.stringify(span)).not.toContain(tenant.key);

    // Its SQL statements are its children (CLIENT spans), named by the statement, without its values.
    const statements = receiver.spans.filter((s) => s.parentSpanId === span.spanId && s.attributes['db.system.name'] === 'postgresql');
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement).toMatchObject({ kind: CLIENT, traceId: CLIENT_TRACE });
      expect(statement.name).toMatch(/^[a-z_]+\.[a-z_0-9.]+$/);
      expect(statement.attributes['db.query.summary']).toBe(statement.name);
      expect(JSON.stringify(statement)).not.toContain(tenant.accountId);
    }
  });

  it('statements outside a request (polling, housekeeping) make no span', async () => {
    await flushTelemetry();
    const roots = receiver.spans.filter((s) => s.attributes['db.system.name'] === 'postgresql' && !s.parentSpanId);
    expect(roots).toEqual([]);
  });

  it("without _meta's, the gateway's traceparent header is the parent", async () => {
    await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'traced-2', method: 'tools/list' }, { traceparent: traceparent(GATEWAY_TRACE, GATEWAY_SPAN) });
    const span = await spanOf('traced-2');
    expect(span).toMatchObject({ name: 'tools/list', traceId: GATEWAY_TRACE, parentSpanId: GATEWAY_SPAN, links: [] });
  });

  it('a 2025 session: mcp.session.id and mcp.protocol.version; a 2026-07-28 request never names a session', async () => {
    const { sessionId } = await initSession(t, tenant.key);
    await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'traced-3', method: 'ping' }, sessionHeaders(sessionId));
    expect((await spanOf('traced-3')).attributes).toMatchObject({ 'mcp.session.id': sessionId, 'mcp.protocol.version': '2025-06-18' });

    const res = await modern(t, tenant.key, 'traced-4', 'tools/list', {}, { meta: meta({ traceparent: traceparent(CLIENT_TRACE, CLIENT_SPAN) }) });
    expect(res.status).toBe(200);
    const modernSpan = await spanOf('traced-4');
    expect(modernSpan).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    expect(modernSpan.attributes['mcp.protocol.version']).toBe('2026-07-28');
    expect(modernSpan.attributes['mcp.session.id']).toBeUndefined();
  });

  it('error.type: the JSON-RPC code of an error (status ERROR), tool_error for an isError result', async () => {
    await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'traced-5', method: 'no/such/method' });
    const failed = await spanOf('traced-5');
    expect(failed.attributes).toMatchObject({ 'error.type': '-32601', 'rpc.response.status_code': '-32601' });
    expect(failed.status).toMatchObject({ code: 2 });

    const res = await rpc(t, tenant.key, call('traced-6', 'get_article', { id: '00000000-0000-4000-8000-000000000000' }));
    expect(res.body.result.isError).toBe(true);
    expect((await spanOf('traced-6')).attributes).toMatchObject({ 'error.type': 'tool_error', 'gen_ai.tool.name': 'get_article' });
  });

  it('a guard that refuses is an event of the span', async () => {
    const res = await rpc(t, 'rbk_not-a-real-key-0000000000', { jsonrpc: '2.0', id: 'traced-7', method: 'tools/list' });
    expect(res.status).toBe(401);
    const span = await spanOf('traced-7');
    expect(span.events).toEqual([expect.objectContaining({ name: 'mcp.refused' })]);
    expect(span.events[0].attributes).toMatchObject({ 'error.type': String(res.body.error.code) });
    expect(JSON.stringify(span)).not.toContain('rbk_not-a-real-key');
  });

  it('prompts/get names its prompt; resources/read its resource', async () => {
    await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'traced-8', method: 'prompts/get', params: { name: 'no_such_prompt' } });
    expect(await spanOf('traced-8')).toMatchObject({ name: 'prompts/get no_such_prompt', attributes: { 'gen_ai.prompt.name': 'no_such_prompt' } });
    await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'traced-9', method: 'resources/read', params: { uri: 'reblog://nothing' } });
    expect((await spanOf('traced-9')).attributes).toMatchObject({ 'mcp.resource.uri': 'reblog://nothing' });
  });

  it('mcp.server.operation.duration: over OTLP with the semconv buckets, and on /metrics under the same labels', async () => {
    await flushTelemetry();
    const points = receiver.latest('mcp.server.operation.duration');
    expect(receiver.metrics.find((m) => m.name === 'mcp.server.operation.duration')?.unit).toBe('s');
    const listed = points.find((p) => p.attributes['mcp.method.name'] === 'tools/call' && p.attributes['gen_ai.tool.name'] === 'list_projects');
    expect(listed).toMatchObject({ count: 1, explicitBounds: MCP_DURATION_BUCKETS });
    expect(listed!.attributes['error.type']).toBeUndefined();
    expect(points.find((p) => p.attributes['mcp.method.name'] === 'other' && p.attributes['error.type'] === '-32601')).toMatchObject({ count: 1 });
    expect(points.find((p) => p.attributes['gen_ai.tool.name'] === 'get_article')).toMatchObject({ count: 1, attributes: { 'error.type': 'tool_error' } });

    const text = (await request(t.baseUrl).get('/metrics')).text;
    expect(text).toMatch(
      /^reblog_mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="list_projects",error_type=""\} 1$/m,
    );
    expect(text).toMatch(/^reblog_mcp_server_operation_duration_seconds_count\{mcp_method_name="other",gen_ai_tool_name="",error_type="-32601"\} 1$/m);
    expect(text).toMatch(
      /^reblog_mcp_server_operation_duration_seconds_bucket\{le="300",mcp_method_name="tools\/call",gen_ai_tool_name="get_article",error_type="tool_error"\} 1$/m,
    );
  });

  it('with Redis, the rate-limit decision is a CLIENT span of the request, named by its script', async () => {
    const redis = await startRedis();
    const shared = await startTestApp({ REDIS_URL: redis.url });
    try {
      const res = await rpc(shared, tenant.key, { jsonrpc: '2.0', id: 'traced-redis', method: 'tools/list' });
      expect(res.status).toBe(200);
      const span = await spanOf('traced-redis');
      const calls = receiver.spans.filter((s) => s.parentSpanId === span.spanId && s.attributes['db.system.name'] === 'redis');
      expect(calls).toEqual([expect.objectContaining({ kind: CLIENT, name: 'EVALSHA rate_limit.sliding_window' })]);
      expect(JSON.stringify(calls)).not.toContain(tenant.keyId);
    } finally {
      await shared.close();
      await redis.stop();
    }
  });

  it('mcp.server.session.duration: a session its client ends, over OTLP and on /metrics', async () => {
    const { sessionId } = await initSession(t, tenant.key);
    const ended = await t.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set(sessionHeaders(sessionId));
    expect(ended.status).toBe(204);
    await flushTelemetry();
    expect(receiver.latest('mcp.server.session.duration')).toEqual([expect.objectContaining({ count: 1, explicitBounds: MCP_DURATION_BUCKETS })]);
    expect((await request(t.baseUrl).get('/metrics')).text).toMatch(/^reblog_mcp_server_session_duration_seconds_count 1$/m);
  });

  it('mcp.server.session.duration: a session that expired, when it is purged (creation to last use), over OTLP and on /metrics', async () => {
    /** The histogram's count and sum, on /metrics and in the latest OTLP export. */
    const figures = async () => {
      await flushTelemetry();
      const text = (await request(t.baseUrl).get('/metrics')).text;
      const point = receiver.latest('mcp.server.session.duration')[0];
      return {
        count: Number(/^reblog_mcp_server_session_duration_seconds_count (\S+)$/m.exec(text)?.[1] ?? 0),
        sum: Number(/^reblog_mcp_server_session_duration_seconds_sum (\S+)$/m.exec(text)?.[1] ?? 0),
        otlpCount: point?.count ?? 0,
        otlpSum: point?.sum ?? 0,
      };
    };
    const { sessionId: expired } = await initSession(t, tenant.key);
    const { sessionId: ended } = await initSession(t, tenant.key);
    expect((await t.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set(sessionHeaders(ended))).status).toBe(204);
    // Opened two days ago, last used 90 s later, idle ever since: expired.
    await t.app
      .get(DataSource)
      .query(`UPDATE mcp_sessions SET created_at = now() - interval '2 days', last_used_at = now() - interval '2 days' + interval '90 seconds' WHERE id = $1`, [
        expired,
      ]);
    const before = await figures();
    await t.app.get(SessionsService).purgeExpired();
    const rows = (await t.app.get(DataSource).query(`SELECT id FROM mcp_sessions WHERE id = ANY($1)`, [[expired, ended]])) as unknown[];
    expect(rows).toEqual([]);
    const after = await figures();
    // The expired one only: the ended one was counted by its DELETE.
    expect(after.count - before.count).toBe(1);
    expect(after.sum - before.sum).toBeCloseTo(90, 3);
    expect(after.otlpCount - before.otlpCount).toBe(1);
    expect(after.otlpSum - before.otlpSum).toBeCloseTo(90, 3);
  });
});
