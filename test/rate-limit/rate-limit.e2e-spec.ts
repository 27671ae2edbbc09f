import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { admin, createTenant, type Tenant } from '../support/fixtures.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const REFUSAL = /^Rate limit exceeded: 5 requests per second for this credential\. Retry after 1 s\.$/;

interface Answer {
  status: number;
  body: any;
  headers: Record<string, string>;
  at: number;
}

let nextId = 1;

/** A POST /mcp `ping` (any method counts) from `token` to one of the instances. */
async function ping(t: TestApp, token: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const req = request(t.baseUrl).post('/mcp').set('Content-Type', 'application/json').set('Authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  const res = await req.send(body ?? JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'ping' }));
  return { status: res.status, body: res.body, headers: res.headers as Record<string, string>, at: Date.now() };
}

function expectRefusal(a: Answer, id: unknown): void {
  expect(a.status).toBe(429);
  expect(a.headers['retry-after']).toBe('1');
  expect(a.headers['ratelimit-policy']).toBe('"per-credential";q=5;w=1');
  expect(a.headers['ratelimit']).toBe('"per-credential";r=0;t=1');
  expect(a.body).toEqual({ jsonrpc: '2.0', id, error: { code: -32029, message: expect.stringMatching(REFUSAL), data: { retry_after_ms: expect.any(Number) } } });
  expect(a.body.error.data.retry_after_ms).toBeGreaterThanOrEqual(1);
  expect(a.body.error.data.retry_after_ms).toBeLessThanOrEqual(1_000);
}

/** The account's activity entries of one credential (all pages). */
async function entries(t: TestApp, tenant: Tenant): Promise<{ outcome: string; count: number; method: string }[]> {
  const items: { outcome: string; count: number; method: string }[] = [];
  let cursor = '';
  do {
    const page = await admin(t, 'get', `/admin/v1/accounts/${tenant.accountId}/activity?credential_id=${tenant.keyId}&limit=200${cursor ? `&cursor=${cursor}` : ''}`, undefined, 200);
    items.push(...page.items);
    cursor = page.next_cursor ?? '';
  } while (cursor);
  return items;
}

const sum = (xs: { count: number }[]) => xs.reduce((n, x) => n + x.count, 0);

describe('rate limit (in-process store): 5 requests per second per credential', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_SECOND: '5' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts 5 of 8 simultaneous requests and refuses 3 with 429, Retry-After and -32029 carrying the request id', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ping(t, tenant.key, {}, JSON.stringify({ jsonrpc: '2.0', id: `req-${i}`, method: 'ping' }))));
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(3);
    for (const a of accepted) {
      expect(a.headers['ratelimit-policy']).toBe('"per-credential";q=5;w=1');
      expect(a.headers['ratelimit']).toMatch(/^"per-credential";r=[0-4];t=1$/);
    }
    for (const a of refused) expectRefusal(a, `req-${answers.indexOf(a)}`);
  });

  it('does not count refusals, and keeps one window per credential', async () => {
    const tenant = await createTenant(t);
    const other = await createTenant(t);
    const burst = await Promise.all(Array.from({ length: 5 }, () => ping(t, tenant.key)));
    expect(burst.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const lastAccepted = Math.max(...burst.map((a) => a.at));
    // A flood of refused requests inside the window...
    const flood: Answer[] = [];
    for (let i = 0; i < 20; i++) flood.push(await ping(t, tenant.key));
    expect(flood.filter((a) => a.status === 200).length).toBeLessThanOrEqual(5);
    // ...while another credential is served as if nothing happened.
    expect((await Promise.all(Array.from({ length: 5 }, () => ping(t, other.key)))).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // Once the accepted ones are a second old, 5 fit again: the refusals left nothing behind.
    const accepted = [...burst, ...flood].filter((a) => a.status === 200);
    await sleep(Math.max(0, Math.max(lastAccepted, ...accepted.map((a) => a.at)) + 1_050 - Date.now()));
    const after = await Promise.all(Array.from({ length: 5 }, () => ping(t, tenant.key)));
    expect(after.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('comes after the credential check and before the session, version and JSON-RPC checks', async () => {
    const tenant = await createTenant(t);
    await Promise.all(Array.from({ length: 5 }, () => ping(t, tenant.key)));
    // A bad token is 401 whatever the limit of the real one.
    const unauthorized = await ping(t, `${tenant.key}x`);
    expect(unauthorized.status).toBe(401);
    expectRefusal(await ping(t, tenant.key, { 'Mcp-Session-Id': 'no-such-session' }), expect.any(Number));
    expectRefusal(await ping(t, tenant.key, { 'MCP-Protocol-Version': '1999-01-01' }), expect.any(Number));
    expectRefusal(await ping(t, tenant.key, {}, '{"jsonrpc": "2.0", "id": 7, "method": "nope"}'), 7);
    expectRefusal(await ping(t, tenant.key, {}, '{not json'), null);
  });

  it('counts every HTTP method on /mcp: GET and DELETE use up the same window', async () => {
    const tenant = await createTenant(t);
    const auth = { Authorization: `Bearer ${tenant.key}` };
    const statuses = [
      (await request(t.baseUrl).get('/mcp').set(auth)).status,
      (await request(t.baseUrl).get('/mcp').set(auth)).status,
      (await request(t.baseUrl).delete('/mcp').set(auth).set('Mcp-Session-Id', 'gone')).status,
      (await request(t.baseUrl).delete('/mcp').set(auth)).status,
      (await ping(t, tenant.key)).status,
    ];
    expect(statuses).toEqual([405, 405, 404, 400, 200]);
    const refusedDelete = await request(t.baseUrl).delete('/mcp').set(auth).set('Mcp-Session-Id', 'gone');
    expect(refusedDelete.status).toBe(429);
    expect(refusedDelete.body.error.code).toBe(-32029);
    expectRefusal(await ping(t, tenant.key), expect.any(Number));
  });

  it('records every refusal, folded into one entry per credential per second: the counts add up to the requests made', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(Array.from({ length: 40 }, () => ping(t, tenant.key)));
    const refused = answers.filter((a) => a.status === 429).length;
    expect(refused).toBeGreaterThanOrEqual(35 - 5);
    const log = await entries(t, tenant);
    const limited = log.filter((e) => e.outcome === 'rate_limited');
    expect(sum(limited)).toBe(refused);
    expect(sum(log)).toBe(40);
    expect(log.filter((e) => e.outcome === 'ok')).toHaveLength(40 - refused);
    // 40 requests sent at once span a second or two: a few rows, not one per refusal.
    expect(limited.length).toBeLessThanOrEqual(3);
    expect(limited.length).toBeLessThan(refused);
  });
});

describe('rate limit shared through Redis by two instances', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startTestApp({ RATE_LIMIT_PER_SECOND: '5', REDIS_URL: redis.url });
    b = await startTestApp({ RATE_LIMIT_PER_SECOND: '5', REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('accepts 5 of 10 simultaneous requests alternating between the instances', async () => {
    const tenant = await createTenant(a);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => ping(i % 2 ? b : a, tenant.key)));
    expect(answers.filter((x) => x.status === 200)).toHaveLength(5);
    for (const x of answers.filter((x) => x.status !== 200)) expectRefusal(x, expect.any(Number));
    const log = await entries(a, tenant);
    expect(sum(log)).toBe(10);
    expect(sum(log.filter((e) => e.outcome === 'rate_limited'))).toBe(5);
  });

  it('keeps answering when Redis is down (each instance limits alone, no 5xx), and shares the window again when it is back', async () => {
    const tenant = await createTenant(a);
    await redis.stop();
    const during = await Promise.all(Array.from({ length: 8 }, () => ping(a, tenant.key)));
    // The fallback is this instance's own window: the same limit, per instance.
    expect(during.filter((x) => x.status === 200)).toHaveLength(5);
    for (const x of during.filter((x) => x.status !== 200)) expectRefusal(x, expect.any(Number));
    const metrics = (await request(a.baseUrl).get('/metrics')).text;
    expect(metrics).toMatch(/^reblog_rate_limit_store_up 0$/m);
    expect(Number(/^reblog_rate_limit_store_errors_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(8);

    await redis.restart();
    // ioredis reconnects on its own (backoff up to 2 s).
    for (let i = 0; i < 100; i++) {
      const [ma, mb] = await Promise.all([request(a.baseUrl).get('/metrics'), request(b.baseUrl).get('/metrics')]);
      if (/^reblog_rate_limit_store_up 1$/m.test(ma.text) && /^reblog_rate_limit_store_up 1$/m.test(mb.text)) break;
      await sleep(100);
    }
    const fresh = await createTenant(a);
    const shared = await Promise.all(Array.from({ length: 10 }, (_, i) => ping(i % 2 ? b : a, fresh.key)));
    expect(shared.filter((x) => x.status === 200)).toHaveLength(5);
  });
});
