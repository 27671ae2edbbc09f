import { createDatabase, eventually, type TestDatabase } from '../support/database.js';
import { activity, configuredTenant, newKey, type Tenant } from '../support/fixtures.js';
import { callOk, rpc } from '../support/mcp-client.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import type { TestApp } from '../support/test-app.js';

/**
 * GET /media/:id reads a whole image from Postgres: each credential has a window of its own for
 * them, RATE_LIMIT_PER_SECOND reads per sliding second, apart from its /mcp requests.
 */
describe('GET /media/:id rate limit: RATE_LIMIT_PER_SECOND reads per second per credential, in a window of their own', () => {
  let t: TestApp;
  let db: TestDatabase;
  let owner: Tenant;
  let mediaId: string;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({ SYNC_BUDGET_MS: '120000', RATE_LIMIT_PER_SECOND: '5' });
    owner = await configuredTenant(t);
    mediaId = (await callOk(t, owner.key, 'generate_image', { project_id: owner.projectIds[0], prompt: 'a loaf of bread', aspect_ratio: '1:1' })).media.id;
  });
  afterAll(() => db?.drop());

  const read = (token: string, id = mediaId) => t.http.get(`/media/${id}`).set('Authorization', `Bearer ${token}`);

  it('serves 5 of 6 simultaneous reads of one credential and refuses the 6th with 429 and Retry-After; another credential is unaffected', async () => {
    const key = await newKey(t, owner.accountId, [{ project_id: owner.projectIds[0], role: 'viewer' }], ['read'], 'media reader');
    const other = await newKey(t, owner.accountId, [{ project_id: owner.projectIds[0], role: 'viewer' }], ['read'], 'other reader');

    const answers = await Promise.all(Array.from({ length: 6 }, () => read(key.key)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.body).toEqual({
      error: {
        code: 'rate_limited',
        message: 'Rate limit exceeded: 5 image reads per second for this credential. Retry after 1 s.',
        details: { retry_after_ms: expect.any(Number) },
      },
    });
    expect(refused.body.error.details.retry_after_ms).toBeGreaterThanOrEqual(1);
    expect(refused.body.error.details.retry_after_ms).toBeLessThanOrEqual(1_000);

    // Another credential of the same account and project has its own window.
    expect((await Promise.all(Array.from({ length: 5 }, () => read(other.key)))).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // The first one's /mcp requests are a window apart: its media reads ate none of them.
    const pings = await Promise.all(Array.from({ length: 5 }, (_, i) => rpc(t, key.key, { jsonrpc: '2.0', id: i, method: 'ping' })));
    expect(pings.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('counts every read with a valid credential, an unknown id too; a request without one is 401 and counts nowhere', async () => {
    const key = await newKey(t, owner.accountId, [{ project_id: owner.projectIds[0], role: 'viewer' }], ['read'], 'prober');
    const unknown = '00000000-0000-7000-8000-000000000000';
    const answers = await Promise.all(Array.from({ length: 6 }, () => read(key.key, unknown)));
    expect(answers.map((a) => a.status).sort()).toEqual([404, 404, 404, 404, 404, 429]);
    expect((await t.http.get(`/media/${mediaId}`)).status).toBe(401);
  });

  it('keeps image reads out of the activity log, refused ones too: it records /mcp requests', async () => {
    const key = await newKey(t, owner.accountId, [{ project_id: owner.projectIds[0], role: 'viewer' }], ['read'], 'logged');
    const answers = await Promise.all(Array.from({ length: 7 }, () => read(key.key)));
    expect(answers.filter((a) => a.status === 429).length).toBe(2);
    // A /mcp request after them is logged; once it shows, nothing else of this key is there.
    expect((await rpc(t, key.key, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    const entries = await eventually(
      () => activity(t, owner.accountId, `credential_id=${key.id}`),
      (xs) => xs.length > 0,
    );
    expect(entries.map((e: { method: string; outcome: string; count: number }) => [e.method, e.outcome, e.count])).toEqual([['ping', 'ok', 1]]);
  });
});

describe('GET /media/:id rate limit shared through Redis by two instances', () => {
  let db: TestDatabase;
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    redis = await startRedis();
    db = await createDatabase();
    a = await db.app({ SYNC_BUDGET_MS: '120000', RATE_LIMIT_PER_SECOND: '5', REDIS_URL: redis.url });
    b = await db.app({ SYNC_BUDGET_MS: '120000', RATE_LIMIT_PER_SECOND: '5', REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await db?.drop();
    await redis?.stop();
  });

  it('serves 5 of 10 simultaneous reads alternating between the instances', async () => {
    const owner = await configuredTenant(a);
    const { id } = (await callOk(a, owner.key, 'generate_image', { prompt: 'a loaf of bread', aspect_ratio: '1:1' })).media;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? b : a).http.get(`/media/${id}`).set('Authorization', `Bearer ${owner.key}`)),
    );
    expect(answers.filter((x) => x.status === 200)).toHaveLength(5);
    expect(answers.filter((x) => x.status === 429)).toHaveLength(5);
  });
});
