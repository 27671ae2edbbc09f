import { randomBytes } from 'node:crypto';
import { CredentialsRepository } from '../../src/auth/credentials.repository.js';
import { MAX_CACHED_PRINCIPALS, PrincipalResolver } from '../../src/auth/principal.resolver.js';
import { CACHE_CHANNEL, DatabaseNotifications } from '../../src/database/notifications.service.js';
import { startInstances, type TestDatabase } from '../support/database.js';
import { admin, createTenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';
import { watchCalls } from '../support/watch-calls.js';

/** The resolver's reads on `t`: the repository's lookup, which runs its real query. */
const watchReads = (t: TestApp) => watchCalls(t.app.get(CredentialsRepository), 'findPrincipal');

const unknownToken = () => `rbk_${randomBytes(32).toString('base64url')}`;

describe('principal cache', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
  });
  afterAll(() => db?.drop());

  it('does not cache a principal read before a revocation on this instance that finished while the read was answered', async () => {
    const tenant = await createTenant(a);
    const resolver = a.app.get(PrincipalResolver);
    const watch = watchReads(a);
    try {
      const held = watch.holdNext();
      const inFlight = resolver.resolve(tenant.key);
      await held.read; // Postgres answered: the key was valid then.
      await admin(a, 'delete', `/admin/v1/api-keys/${tenant.keyId}`, undefined, 204);
      held.release();
      // The request that started before the revocation may still be served...
      expect(await inFlight).not.toBeNull();
      // ...but nothing after it: the revoked principal was not cached.
      expect(await resolver.resolve(tenant.key)).toBeNull();
      expect((await rpc(a, tenant.key, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
    } finally {
      watch.restore();
    }
  });

  it('does not cache a principal read before a revocation that another instance announced while the read was answered', async () => {
    const tenant = await createTenant(a);
    const resolver = a.app.get(PrincipalResolver);
    const watch = watchReads(a);
    // Subscribed after the resolver: called once it has handled the same notification.
    let heard!: () => void;
    const announced = new Promise<void>((done) => (heard = done));
    const unsubscribe = a.app.get(DatabaseNotifications).subscribe(CACHE_CHANNEL, (payload) => payload.startsWith('credential:') && heard());
    try {
      const held = watch.holdNext();
      const inFlight = resolver.resolve(tenant.key);
      await held.read;
      await admin(b, 'delete', `/admin/v1/api-keys/${tenant.keyId}`, undefined, 204);
      await announced;
      held.release();
      expect(await inFlight).not.toBeNull();
      expect(await resolver.resolve(tenant.key)).toBeNull();
    } finally {
      unsubscribe();
      watch.restore();
    }
  });

  it(`keeps serving valid principals from the cache through a flood of more than ${MAX_CACHED_PRINCIPALS} unknown tokens, which stay 401`, async () => {
    const tenant = await createTenant(a);
    const resolver = a.app.get(PrincipalResolver);
    const watch = watchReads(a);
    // Only Date is frozen (the cache's clock), so no entry expires however long the flood takes.
    jest.useFakeTimers({
      now: Date.now(),
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    try {
      expect(await resolver.resolve(tenant.key)).toMatchObject({ accountId: tenant.accountId });
      expect(watch.calls()).toBe(1);
      const flood = Array.from({ length: MAX_CACHED_PRINCIPALS + 100 }, unknownToken);
      for (let i = 0; i < flood.length; i += 50) {
        const answers = await Promise.all(flood.slice(i, i + 50).map(async (token) => resolver.resolve(token)));
        expect(answers.every((p) => p === null)).toBe(true);
      }
      const readsAfterFlood = watch.calls();
      expect(readsAfterFlood).toBe(1 + flood.length);
      // The valid principal is still cached: no read.
      expect(await resolver.resolve(tenant.key)).toMatchObject({ accountId: tenant.accountId });
      expect(watch.calls()).toBe(readsAfterFlood);
      // A recent unknown token is answered from the (separate) negative cache; the first ones were
      // dropped from it, because it is bounded too. Both are refused.
      expect(await resolver.resolve(flood[flood.length - 1])).toBeNull();
      expect(watch.calls()).toBe(readsAfterFlood);
      expect(await resolver.resolve(flood[0])).toBeNull();
      expect(watch.calls()).toBe(readsAfterFlood + 1);
    } finally {
      jest.useRealTimers();
      watch.restore();
    }
    expect((await rpc(a, unknownToken(), { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
    expect((await rpc(a, tenant.key, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(200);
  }, 120_000);
});
