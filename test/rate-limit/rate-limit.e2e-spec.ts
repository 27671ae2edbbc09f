import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { eventually } from '../support/database.js';
import { activity, createTenant, type Tenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
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
  const res = await rpc(t, token, body ?? { jsonrpc: '2.0', id: nextId++, method: 'ping' }, { Accept: '', ...headers });
  return { status: res.status, body: res.body, headers: res.headers as Record<string, string>, at: Date.now() };
}

const CHATTER_REFUSAL =
  /^Rate limit exceeded: 50 protocol messages \(notifications, responses, GET, DELETE\) per second for this credential\. Retry after 1 s\.$/;

/** A POST /mcp notification (protocol chatter: its own window of 10x the limit). */
function notify(t: TestApp, token: string): Promise<Answer> {
  return ping(t, token, {}, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
}

/** The client's answer to a server request (chatter too). */
function respond(t: TestApp, token: string): Promise<Answer> {
  return ping(t, token, {}, JSON.stringify({ jsonrpc: '2.0', id: 'srv-1', result: {} }));
}

/** GET /mcp without a session (400), or DELETE /mcp of a session that does not exist (404). */
async function bare(t: TestApp, token: string, method: 'get' | 'delete'): Promise<Answer> {
  const req = request(t.baseUrl)[method]('/mcp').set('Authorization', `Bearer ${token}`);
  const res = await (method === 'delete' ? req.set('Mcp-Session-Id', 'gone') : req);
  return { status: res.status, body: res.body, headers: res.headers as Record<string, string>, at: Date.now() };
}

function expectChatterRefusal(a: Answer, id: unknown): void {
  expect(a.status).toBe(429);
  expect(a.headers['retry-after']).toBe('1');
  expect(a.headers['ratelimit-policy']).toBe('"chatter";q=50;w=1');
  expect(a.headers['ratelimit']).toBe('"chatter";r=0;t=1');
  expect(a.body).toEqual({
    jsonrpc: '2.0',
    id,
    error: { code: -32029, message: expect.stringMatching(CHATTER_REFUSAL), data: { retry_after_ms: expect.any(Number) } },
  });
  expect(a.body.error.data.retry_after_ms).toBeGreaterThanOrEqual(1);
  expect(a.body.error.data.retry_after_ms).toBeLessThanOrEqual(1_000);
}

/** Warms the credential cache with one request, so a burst after it reaches the limiter together. */
async function warm(t: TestApp, token: string): Promise<void> {
  expect((await request(t.baseUrl).get('/mcp').set('Authorization', `Bearer ${token}`)).status).toBe(400);
}

function expectRefusal(a: Answer, id: unknown): void {
  expect(a.status).toBe(429);
  expect(a.headers['retry-after']).toBe('1');
  expect(a.headers['ratelimit-policy']).toBe('"per-credential";q=5;w=1');
  expect(a.headers['ratelimit']).toBe('"per-credential";r=0;t=1');
  expect(a.body).toEqual({
    jsonrpc: '2.0',
    id,
    error: { code: -32029, message: expect.stringMatching(REFUSAL), data: { retry_after_ms: expect.any(Number) } },
  });
  expect(a.body.error.data.retry_after_ms).toBeGreaterThanOrEqual(1);
  expect(a.body.error.data.retry_after_ms).toBeLessThanOrEqual(1_000);
}

/** The account's activity entries of one credential (all pages). */
const entries = (t: TestApp, tenant: Tenant): Promise<{ outcome: string; count: number; method: string }[]> =>
  activity(t, tenant.accountId, `credential_id=${tenant.keyId}`);

const sum = (xs: { count: number }[]) => xs.reduce((n, x) => n + x.count, 0);

describe('rate limit (in-process store): 5 requests per second per credential, refused at once with RATE_LIMIT_MAX_WAIT_MS=0', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_MAX_WAIT_MS: '0' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts 5 of 8 simultaneous requests and refuses 3 with 429, Retry-After and -32029 carrying the request id', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => ping(t, tenant.key, {}, JSON.stringify({ jsonrpc: '2.0', id: `req-${i}`, method: 'ping' }))),
    );
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

  it('lets the SDK client connect without eating the budget: initialize is 1 of the 5 requests, the next 4 fit, the 6th is 429', async () => {
    const tenant = await createTenant(t);
    // connect() sends initialize, notifications/initialized and a GET for the event stream.
    const client = await connectClient(t, tenant.key);
    const lists = await Promise.allSettled(Array.from({ length: 5 }, () => client.listTools()));
    expect(lists.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
    const [refused] = lists.filter((r) => r.status === 'rejected');
    expect(String(refused.reason)).toMatch(/-32029/);
    expect((refused.reason as { code?: number }).code).toBe(429);
    await client.close();
  });

  it('gives notifications, responses, GET and DELETE their own flood guard of 10x the limit: 50 accepted, the rest 429 with -32029', async () => {
    const tenant = await createTenant(t);
    await warm(t, tenant.key);
    const senders = [notify, respond, (x: TestApp, k: string) => bare(x, k, 'get'), (x: TestApp, k: string) => bare(x, k, 'delete')];
    // warm() was the first GET: 49 more fit, 6 of these 55 are refused.
    const answers = await Promise.all(Array.from({ length: 55 }, (_, i) => senders[i % 4](t, tenant.key)));
    const accepted = answers.filter((a) => a.status !== 429);
    expect(accepted).toHaveLength(49);
    const expected = { 0: 202, 1: 202, 2: 400, 3: 404 } as Record<number, number>;
    for (const a of accepted) expect(a.status).toBe(expected[answers.indexOf(a) % 4]);
    for (const a of accepted) expect(a.headers['ratelimit-policy']).toBe('"chatter";q=50;w=1');
    // A response carries its own id; notifications and bodiless requests have none.
    for (const a of answers.filter((x) => x.status === 429)) expectChatterRefusal(a, answers.indexOf(a) % 4 === 1 ? 'srv-1' : null);
    const log = await entries(t, tenant);
    expect(sum(log)).toBe(56);
    expect(sum(log.filter((e) => e.outcome === 'rate_limited'))).toBe(6);
  });

  it('keeps the request window and the chatter window apart: either exhausted leaves the other whole', async () => {
    const tenant = await createTenant(t);
    await warm(t, tenant.key);
    // All five requests and 49 more chatter messages at once: none is refused.
    const [pings, chatter] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => ping(t, tenant.key))),
      Promise.all(Array.from({ length: 49 }, () => notify(t, tenant.key))),
    ]);
    expect(pings.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(chatter.every((a) => a.status === 202)).toBe(true);
    // Each is now full, and says so in its own terms.
    expectRefusal(await ping(t, tenant.key, {}, '{"jsonrpc": "2.0", "id": 9, "method": "ping"}'), 9);
    expectChatterRefusal(await notify(t, tenant.key), null);
    expectChatterRefusal(await bare(t, tenant.key, 'delete'), null);

    // The other way round: a credential whose chatter is exhausted still gets its 5 requests.
    const other = await createTenant(t);
    await warm(t, other.key);
    const flood = await Promise.all(Array.from({ length: 60 }, () => notify(t, other.key)));
    expect(flood.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(11);
    expect((await Promise.all(Array.from({ length: 5 }, () => ping(t, other.key)))).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('counts a body that is not a notification or a response as a request, so garbage cannot use the larger window', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all([
      ...Array.from({ length: 3 }, () => ping(t, tenant.key, {}, '{not json')),
      ...Array.from({ length: 2 }, () => ping(t, tenant.key, {}, '{"jsonrpc": "2.0"}')),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400]);
    expectRefusal(await ping(t, tenant.key), expect.any(Number));
    expect((await notify(t, tenant.key)).status).toBe(202);
  });

  it("records a refusal with the session it named and that session's client; an unknown session is not named", async () => {
    const tenant = await createTenant(t);
    const { sessionId } = await initSession(t, tenant.key);
    await Promise.all(Array.from({ length: 4 }, () => ping(t, tenant.key, sessionHeaders(sessionId))));
    expectRefusal(await ping(t, tenant.key, sessionHeaders(sessionId)), expect.any(Number));
    expectRefusal(await ping(t, tenant.key, { 'Mcp-Session-Id': 'no-such-session' }), expect.any(Number));
    const limited = (await activity(t, tenant.accountId, 'outcome=rate_limited')).reverse();
    // Folded by second: one row, or two when the second turned between them.
    expect(sum(limited)).toBe(2);
    expect([limited[0].client, limited[0].session_id]).toEqual([{ name: 'raw-agent', version: '9.9.9' }, sessionId]);
    if (limited.length === 2) expect([limited[1].client, limited[1].session_id]).toEqual([null, null]);
  });

  it('records a refused initialize with the clientInfo it sends', async () => {
    const tenant = await createTenant(t);
    await Promise.all(Array.from({ length: 5 }, () => ping(t, tenant.key)));
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bursty-agent', version: '3.1.0' } },
    };
    expectRefusal(await ping(t, tenant.key, {}, JSON.stringify(initialize)), 1);
    const limited = await activity(t, tenant.accountId, 'outcome=rate_limited');
    expect(limited.map((e) => [e.method, e.client, e.session_id, e.count])).toEqual([['initialize', { name: 'bursty-agent', version: '3.1.0' }, null, 1]]);
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

describe('rate limit shared through Redis by two instances, refused at once with RATE_LIMIT_MAX_WAIT_MS=0', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startTestApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_MAX_WAIT_MS: '0', REDIS_URL: redis.url });
    b = await startTestApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_MAX_WAIT_MS: '0', REDIS_URL: redis.url });
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

  it('shares the chatter window too, apart from the request window: 50 notifications in total, initialize counted once', async () => {
    const tenant = await createTenant(a);
    await warm(a, tenant.key);
    const flood = await Promise.all(Array.from({ length: 55 }, (_, i) => notify(i % 2 ? b : a, tenant.key)));
    expect(flood.filter((x) => x.status === 202)).toHaveLength(49);
    for (const x of flood.filter((x) => x.status !== 202)) expectChatterRefusal(x, null);
    // Its own key in Redis: the request window of the same credential is untouched.
    expect((await Promise.all(Array.from({ length: 5 }, (_, i) => ping(i % 2 ? b : a, tenant.key)))).map((x) => x.status)).toEqual([200, 200, 200, 200, 200]);
    const store = new Redis(redis.url);
    try {
      const [chatter, requests] = await Promise.all([
        store.zcard(`reblog:rl:chatter:${tenant.keyId}`),
        store.zcard(`reblog:rl:per-credential:${tenant.keyId}`),
      ]);
      // Within the second (or the first few accepted ones already left: never more, never mixed).
      expect(chatter).toBeLessThanOrEqual(50);
      expect(chatter).toBeGreaterThan(5);
      expect(requests).toBeLessThanOrEqual(5);
    } finally {
      store.disconnect();
    }

    // A client connected through one instance and calling through the other: connect() took 1 of the 5 requests.
    const fresh = await createTenant(a);
    const client = await connectClient(a, fresh.key);
    const sessionId = (client.transport as { sessionId?: string }).sessionId!;
    const headers = sessionHeaders(sessionId);
    const lists = await Promise.all(
      Array.from({ length: 5 }, (_, i) => rpc(i % 2 ? a : b, fresh.key, { jsonrpc: '2.0', id: i, method: 'tools/list' }, headers)),
    );
    expect(lists.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429]);
    await client.close();
  });

  it('a decision Redis answers too late falls back to this instance, and the next one it answers in time is shared again (reblog_rate_limit_store_up back to 1)', async () => {
    const tenant = await createTenant(a);
    const storeUp = async () => Number(/^reblog_rate_limit_store_up (\d)$/m.exec((await request(a.baseUrl).get('/metrics')).text)?.[1]);
    const pauser = new Redis(redis.url);
    try {
      // Redis holds every client's commands for 600 ms: longer than the 250 ms the store waits for one. The connection stays up.
      await pauser.call('CLIENT', 'PAUSE', '600', 'ALL');
      expect((await ping(a, tenant.key)).status).toBe(200);
      expect(await storeUp()).toBe(0);
      await sleep(700);
      expect((await ping(a, tenant.key)).status).toBe(200);
      expect(await storeUp()).toBe(1);
    } finally {
      pauser.disconnect();
    }
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
    const storeUp = async (t: TestApp) => /^reblog_rate_limit_store_up 1$/m.test((await request(t.baseUrl).get('/metrics')).text);
    await eventually(
      async () => (await Promise.all([storeUp(a), storeUp(b)])).every(Boolean),
      (up) => up,
      10_000,
    );
    const fresh = await createTenant(a);
    const shared = await Promise.all(Array.from({ length: 10 }, (_, i) => ping(i % 2 ? b : a, fresh.key)));
    expect(shared.filter((x) => x.status === 200)).toHaveLength(5);
  });
});
