import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { RATE_LIMIT_STORE } from '../../src/rate-limit/rate-limit.module.js';
import type { RateLimitStore, Reservation } from '../../src/rate-limit/sliding-window.store.js';
import { eventually } from '../support/database.js';
import { activity, createTenant, type Tenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// A burst over the limit waits for the next free slot (RATE_LIMIT_MAX_WAIT_MS, 1000 by default) instead of
// being refused, at most the limit waiting per credential; never more than the limit start within a second.

const LIMIT = 5;
const REFUSAL = 'Rate limit exceeded: 5 requests per second for this credential. Retry after 1 s.';

interface Answer {
  status: number;
  body: any;
  headers: Record<string, string>;
  /** When the answer arrived, to order answers (never compared with a duration). */
  at: number;
}

let nextId = 1;

async function ping(t: TestApp, token: string, headers: Record<string, string> = {}, method = 'ping'): Promise<Answer> {
  const res = await rpc(t, token, { jsonrpc: '2.0', id: nextId++, method }, { Accept: '', ...headers });
  return { status: res.status, body: res.body, headers: res.headers as Record<string, string>, at: performance.now() };
}

/** What the stores of the instances decided for one credential: every slot taken, the starts (on the store's clock) of those not given back, and how many were. */
interface Decisions {
  started: { key: string; reservation: Reservation }[];
  released: { key: string; slot: string }[];
  of(tenant: Tenant): { starts: number[]; reservations: Reservation[]; released: number };
}

/** Watches the rate-limit store of each app (the store is the one that decides when a request starts). */
function watch(...apps: TestApp[]): Decisions {
  const decisions: Decisions = {
    started: [],
    released: [],
    of: (tenant) => {
      const mine = decisions.started.filter((d) => d.key === `per-credential:${tenant.keyId}`).map((d) => d.reservation);
      const released = new Set(decisions.released.filter((r) => r.key.endsWith(tenant.keyId)).map((r) => r.slot));
      const starts = mine.filter((r) => !released.has(r.slot)).map((r) => r.startsAt);
      return { starts: starts.sort((a, b) => a - b), reservations: mine, released: released.size };
    },
  };
  for (const t of apps) {
    const store = t.app.get<RateLimitStore>(RATE_LIMIT_STORE, { strict: false });
    const reserve = store.reserve.bind(store);
    const release = store.release.bind(store);
    store.reserve = async (key, ttl, limit, maxWaitMs) => {
      const reservation = await reserve(key, ttl, limit, maxWaitMs);
      if (!reservation.isBlocked) decisions.started.push({ key, reservation });
      return reservation;
    };
    store.release = async (key, slot) => {
      await release(key, slot);
      decisions.released.push({ key, slot });
    };
  }
  return decisions;
}

/** No 1000 ms span holds more than the limit of these start times. */
function expectAtMostLimitPerSecond(starts: number[]): void {
  const crowded = starts.slice(LIMIT).filter((s, i) => s - starts[i] < 1_000);
  expect(crowded).toEqual([]);
}

function expectRefusal(a: Answer, code: number): void {
  expect(a.status).toBe(429);
  expect(a.headers['retry-after']).toBe('1');
  expect(a.body).toEqual({ jsonrpc: '2.0', id: expect.any(Number), error: { code, message: REFUSAL, data: { retry_after_ms: expect.any(Number) } } });
  expect(a.body.error.data.retry_after_ms).toBeGreaterThanOrEqual(1);
  expect(a.body.error.data.retry_after_ms).toBeLessThanOrEqual(1_000);
}

const sum = (xs: { count: number }[]) => xs.reduce((n, x) => n + x.count, 0);
const entries = (t: TestApp, tenant: Tenant): Promise<any[]> => activity(t, tenant.accountId, `credential_id=${tenant.keyId}`);

/** Sends `perSecond` pings a second for `seconds`, without waiting for the answers, alternating between `apps`. */
async function sustained(apps: TestApp[], token: string, perSecond: number, seconds: number): Promise<Answer[]> {
  const sent: Promise<Answer>[] = [];
  const start = performance.now();
  for (let i = 0; i < perSecond * seconds; i++) {
    await sleep(Math.max(0, start + (i * 1_000) / perSecond - performance.now()));
    sent.push(ping(apps[i % apps.length], token));
  }
  return Promise.all(sent);
}

/**
 * A waiting request whose client goes away gives its slot back: 5 start, 5 wait, one of them is
 * aborted; the next request then takes a slot (it waits, it is not refused), and the one after is refused.
 */
async function abortFreesTheSlot(apps: TestApp[], decisions: Decisions): Promise<void> {
  const [a, b] = [apps[0], apps[apps.length - 1]];
  const tenant = await createTenant(a);
  expect((await Promise.all(Array.from({ length: LIMIT }, () => ping(a, tenant.key)))).map((x) => x.status)).toEqual([200, 200, 200, 200, 200]);
  const abort = new AbortController();
  const post = (signal?: AbortSignal) =>
    fetch(`${a.baseUrl}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tenant.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'ping' }),
      signal,
    }).then((res) => res.status);
  const waiting = [post(abort.signal).catch((err: Error) => err.name), ...Array.from({ length: LIMIT - 1 }, () => post())];
  // All 10 hold a slot, 5 of them ahead: the queue is full.
  await eventually(
    async () => decisions.of(tenant).reservations.length,
    (n) => n === 2 * LIMIT,
    10_000,
    10,
  );
  expect(decisions.of(tenant).reservations.filter((r) => r.waitMs > 0)).toHaveLength(LIMIT);
  abort.abort();
  await eventually(
    async () => decisions.of(tenant).released,
    (n) => n === 1,
    10_000,
    10,
  );
  const next = await Promise.all([
    ping(b, tenant.key),
    eventually(
      async () => decisions.of(tenant).reservations.length,
      (n) => n === 2 * LIMIT + 1,
      10_000,
      10,
    ).then(() => ping(b, tenant.key)),
  ]);
  // The 11th took the freed place in the queue: it waited for a slot and was answered.
  expect(decisions.of(tenant).reservations[2 * LIMIT].waitMs).toBeGreaterThan(0);
  expect(next[0].status).toBe(200);
  expectRefusal(next[1], -32029);
  expect(await Promise.all(waiting)).toEqual(['AbortError', 200, 200, 200, 200]);
  expectAtMostLimitPerSecond(decisions.of(tenant).starts);
  // The aborted request is in the log too (it never ran), as limited.
  const log = await eventually(
    () => entries(a, tenant),
    (xs) => sum(xs) === 2 * LIMIT + 2,
    10_000,
  );
  expect(sum(log.filter((e) => e.outcome === 'rate_limited'))).toBe(2);
}

describe('rate limit smoothing (in-process store, RATE_LIMIT_MAX_WAIT_MS default)', () => {
  let t: TestApp;
  let decisions: Decisions;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_SECOND: String(LIMIT) });
    decisions = watch(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a burst of 10 at once, all of them, never starting more than 5 within a second', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(Array.from({ length: 10 }, () => ping(t, tenant.key)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const { starts, reservations } = decisions.of(tenant);
    expect(starts).toHaveLength(10);
    expect(reservations.filter((r) => r.waitMs > 0)).toHaveLength(5);
    expectAtMostLimitPerSecond(starts);
    const log = await entries(t, tenant);
    expect(sum(log)).toBe(10);
    expect(log.every((e) => e.outcome === 'ok')).toBe(true);
    // The first test of this app: its waits are these.
    expect((await request(t.baseUrl).get('/metrics')).text).toMatch(/^reblog_rate_limit_waits_total 5$/m);
  });

  it('of 12 at once, starts 10 (5 now, 5 waiting) and refuses 2 at once: at most the limit waits', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(Array.from({ length: 12 }, () => ping(t, tenant.key)));
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(2);
    for (const a of refused) expectRefusal(a, -32029);
    expect(decisions.of(tenant).reservations.filter((r) => r.waitMs > 0)).toHaveLength(5);
    // Refused at once: both answered before any request that waited.
    const waited = answers
      .filter((a) => a.status === 200)
      .sort((x, y) => x.at - y.at)
      .slice(5);
    expect(Math.max(...refused.map((a) => a.at))).toBeLessThan(Math.min(...waited.map((a) => a.at)));
    const log = await entries(t, tenant);
    expect(sum(log)).toBe(12);
    expect(sum(log.filter((e) => e.outcome === 'rate_limited'))).toBe(2);
  });

  it('under a sustained 20 a second refuses about 15 a second, each recorded', async () => {
    const tenant = await createTenant(t);
    const answers = await sustained([t], tenant.key, 20, 2);
    const refused = answers.filter((a) => a.status === 429);
    for (const a of refused) expectRefusal(a, -32029);
    // 40 sent over 2 s: 5 start a second, and the slots up to a second ahead are held (about 15 in all).
    expect(refused.length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeLessThanOrEqual(30);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(40 - refused.length);
    expectAtMostLimitPerSecond(decisions.of(tenant).starts);
    const log = await entries(t, tenant);
    expect(sum(log)).toBe(40);
    expect(sum(log.filter((e) => e.outcome === 'rate_limited'))).toBe(refused.length);
  });

  it('gives back the slot of a waiting request whose client goes away: the next request takes it', async () => {
    await abortFreesTheSlot([t], decisions);
  });

  it('lets the SDK client connect and list everything at once, unpaced: nothing is refused', async () => {
    const tenant = await createTenant(t);
    const client = await connectClient(t, tenant.key);
    // initialize, then what clients send on connect, and a few more: 9 requests within a second.
    const lists = await Promise.all([
      client.listTools(),
      client.listPrompts(),
      client.listResources(),
      client.listResourceTemplates(),
      client.listTools(),
      client.ping(),
      client.listTools(),
      client.listPrompts(),
    ]);
    expect(lists).toHaveLength(8);
    await client.close();
    expectAtMostLimitPerSecond(decisions.of(tenant).starts);
    expect((await entries(t, tenant)).filter((e) => e.outcome === 'rate_limited')).toEqual([]);
  });

  it("records a refusal with the client and session it named (the session's clientInfo)", async () => {
    const tenant = await createTenant(t);
    const { sessionId } = await initSession(t, tenant.key);
    const answers = await Promise.all(Array.from({ length: 11 }, () => ping(t, tenant.key, sessionHeaders(sessionId), 'tools/list')));
    expect(answers.filter((a) => a.status === 429)).toHaveLength(2);
    const limited = (await entries(t, tenant)).filter((e) => e.outcome === 'rate_limited');
    expect(sum(limited)).toBe(2);
    for (const e of limited) expect([e.method, e.client, e.session_id]).toEqual(['tools/list', { name: 'raw-agent', version: '9.9.9' }, sessionId]);
  });
});

describe('rate limit smoothing shared through Redis by two instances', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  let decisions: Decisions;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startTestApp({ RATE_LIMIT_PER_SECOND: String(LIMIT), REDIS_URL: redis.url });
    b = await startTestApp({ RATE_LIMIT_PER_SECOND: String(LIMIT), REDIS_URL: redis.url });
    decisions = watch(a, b);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('of 12 at once on two instances, starts 10 and refuses 2: the slots and the queue are shared', async () => {
    const tenant = await createTenant(a);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ping(i % 2 ? b : a, tenant.key)));
    const refused = answers.filter((x) => x.status !== 200);
    expect(refused).toHaveLength(2);
    for (const x of refused) expectRefusal(x, -32029);
    expectAtMostLimitPerSecond(decisions.of(tenant).starts);
  });

  it('never starts more than 5 within a second on the two together, under a sustained 20 a second', async () => {
    const tenant = await createTenant(a);
    const answers = await sustained([a, b], tenant.key, 20, 2);
    const refused = answers.filter((x) => x.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeLessThanOrEqual(30);
    const { starts } = decisions.of(tenant);
    expect(starts).toHaveLength(40 - refused.length);
    expectAtMostLimitPerSecond(starts);
    const log = await entries(a, tenant);
    expect(sum(log)).toBe(40);
    expect(sum(log.filter((e) => e.outcome === 'rate_limited'))).toBe(refused.length);
  });

  it('gives back the slot of a waiting request whose client goes away, for a request to the other instance', async () => {
    await abortFreesTheSlot([a, b], decisions);
  });
});
