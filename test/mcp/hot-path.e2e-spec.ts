import type { Express } from 'express';
import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import { CredentialsRepository } from '../../src/auth/credentials.repository.js';
import { CACHE_CHANNEL, DatabaseNotifications } from '../../src/database/notifications.service.js';
import { PrincipalResolver } from '../../src/auth/principal.resolver.js';
import { RpcError } from '../../src/protocol/json-rpc.js';
import { SessionsRepository } from '../../src/mcp/sessions.repository.js';
import { SessionsService } from '../../src/mcp/sessions.service.js';
import { admin, createTenant, type Tenant } from '../support/fixtures.js';
import { initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { watchCalls } from '../support/watch-calls.js';

/**
 * What nearly every /mcp request finds cached on its instance, its principal and its session, is
 * answered at once, without a promise (docs/architecture.md#the-mcp-pipeline): the checks then run
 * synchronously, and the round of promises each lookup cost is gone. What is not cached is read, and a
 * refusal is the same whichever way it is answered.
 */
describe('the /mcp hot path answers cached lookups at once', () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    other = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a principal once read, an unknown token once looked up and a malformed one are answered without a promise', async () => {
    const resolver = t.app.get(PrincipalResolver);
    const principal = await resolver.resolve(tenant.key);
    expect(principal).toMatchObject({ accountId: tenant.accountId });
    expect(resolver.resolve(tenant.key)).toBe(principal);
    const unknown = `rbk_${'x'.repeat(40)}`;
    expect(await resolver.resolve(unknown)).toBeNull();
    expect(resolver.resolve(unknown)).toBeNull();
    expect(resolver.resolve('not-a-token')).toBeNull();
  });

  it("a cached session is answered at once; another credential's or an unknown one is the 404, thrown or rejected alike", async () => {
    const sessions = t.app.get(SessionsService);
    const resolver = t.app.get(PrincipalResolver);
    const { sessionId } = await initSession(t, tenant.key);
    expect((await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'ping' }, sessionHeaders(sessionId))).status).toBe(200);
    const principal = (await resolver.resolve(tenant.key))!;
    const cached = sessions.get(sessionId, principal);
    expect(cached).not.toBeInstanceOf(Promise);
    expect(cached).toMatchObject({ id: sessionId, protocolVersion: expect.any(String) });

    const stranger = (await resolver.resolve(other.key))!;
    const refused = async (read: () => unknown) => {
      try {
        await read();
      } catch (err) {
        return err;
      }
      throw new Error('expected the session to be refused');
    };
    // Cached here, so refused synchronously; never seen, so refused after the read: the same error.
    const thrown = (await refused(() => sessions.get(sessionId, stranger))) as RpcError;
    const rejected = (await refused(() => sessions.get('no-such-session', principal))) as RpcError;
    for (const err of [thrown, rejected]) {
      expect(err).toBeInstanceOf(RpcError);
      expect(err.httpStatus).toBe(404);
    }
    expect(thrown.message).toBe(rejected.message);
    // Over HTTP: another credential's session is the 404, and the session still serves its own credential.
    expect((await rpc(t, other.key, { jsonrpc: '2.0', id: 2, method: 'ping' }, sessionHeaders(sessionId))).status).toBe(404);
    expect((await rpc(t, tenant.key, { jsonrpc: '2.0', id: 3, method: 'ping' }, sessionHeaders(sessionId))).status).toBe(200);
  });
});

/**
 * When a principal or a session is not cached (first use, or its entry expired), the requests that ask
 * for it meanwhile share one read: a busy credential's expiry costs one query, not one per request
 * (docs/architecture.md#the-mcp-pipeline). A change made while a read is under way is not answered
 * from that read to the requests that come after it.
 */
describe('requests that miss the cache together share one read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a principal, and an unknown token, are looked up once for 20 requests at once', async () => {
    const tenant = await createTenant(t);
    const resolver = t.app.get(PrincipalResolver);
    const reads = watchCalls(t.app.get(CredentialsRepository), 'findPrincipal');
    try {
      const held = reads.holdNext();
      const waiting = Array.from({ length: 20 }, async () => resolver.resolve(tenant.key));
      await held.read;
      held.release();
      const principals = await Promise.all(waiting);
      expect(new Set(principals).size).toBe(1);
      expect(principals[0]).toMatchObject({ accountId: tenant.accountId });
      expect(reads.calls()).toBe(1);
      const unknown = `rbk_${'u'.repeat(40)}`;
      expect(await Promise.all(Array.from({ length: 20 }, async () => resolver.resolve(unknown)))).toEqual(Array(20).fill(null));
      expect(reads.calls()).toBe(2);
    } finally {
      reads.restore();
    }
  });

  it('a request after a revocation does not wait for the lookup that started before it', async () => {
    const tenant = await createTenant(t);
    const resolver = t.app.get(PrincipalResolver);
    const reads = watchCalls(t.app.get(CredentialsRepository), 'findPrincipal');
    try {
      const held = reads.holdNext();
      const before = resolver.resolve(tenant.key);
      await held.read; // Postgres answered: the key was valid then.
      await admin(t, 'delete', `/admin/v1/api-keys/${tenant.keyId}`, undefined, 204);
      // Asked while the read that began before the revocation is still under way: read afresh, refused.
      const after = resolver.resolve(tenant.key);
      held.release();
      expect(await after).toBeNull();
      expect(reads.calls()).toBe(2);
      expect(await before).toMatchObject({ accountId: tenant.accountId });
      expect(await resolver.resolve(tenant.key)).toBeNull();
    } finally {
      reads.restore();
    }
  });

  it('a session is read once for 20 requests at once', async () => {
    const tenant = await createTenant(t);
    const principal = (await t.app.get(PrincipalResolver).resolve(tenant.key))!;
    const sessions = t.app.get(SessionsService);
    // Made here, so not cached yet.
    const { id } = await sessions.create(principal, '2025-11-25', { name: 'test', version: '1' });
    const reads = watchCalls(t.app.get(SessionsRepository), 'find');
    try {
      const held = reads.holdNext();
      const waiting = Array.from({ length: 20 }, async () => sessions.get(id, principal));
      await held.read;
      held.release();
      expect((await Promise.all(waiting)).map((s) => s.id)).toEqual(Array(20).fill(id));
      expect(reads.calls()).toBe(1);
    } finally {
      reads.restore();
    }
  });

  it('a session ended while it is read is the 404 to every request after the end: the read is neither joined nor cached', async () => {
    const tenant = await createTenant(t);
    const principal = (await t.app.get(PrincipalResolver).resolve(tenant.key))!;
    const sessions = t.app.get(SessionsService);
    const reads = watchCalls(t.app.get(SessionsRepository), 'find');
    /** Ends a session made here while its first read is held (answered by Postgres while still live). */
    const endWhileRead = async () => {
      const { id } = await sessions.create(principal, '2025-11-25', null);
      // Subscribed after the sessions service: called once it has handled the same notice.
      const ended = new Promise<void>((heard) => {
        const unsubscribe = t.app.get(DatabaseNotifications).subscribe(CACHE_CHANNEL, (payload) => {
          if (payload !== `session:${id}`) return;
          unsubscribe();
          heard();
        });
      });
      const held = reads.holdNext();
      const before = sessions.get(id, principal);
      await held.read;
      await sessions.end(id, principal);
      // Every instance's notice of the end, this one's included, has arrived before the read answers.
      await ended;
      return { id, before, release: held.release };
    };
    const later = (id: string) => (async () => sessions.get(id, principal))();
    try {
      // Asked while the read that began before the end is under way.
      const first = await endWhileRead();
      const after = later(first.id);
      first.release();
      await expect(after).rejects.toMatchObject({ httpStatus: 404 });
      expect(await first.before).toMatchObject({ id: first.id });

      // Asked once that read has answered: it was not cached.
      const second = await endWhileRead();
      second.release();
      expect(await second.before).toMatchObject({ id: second.id });
      await expect(later(second.id)).rejects.toMatchObject({ httpStatus: 404 });
    } finally {
      reads.restore();
    }
  });
});

/**
 * Every request and response is made with Express's prototypes, so Express's dispatch changes neither
 * (src/common/express-server.ts): /mcp, the REST side and an unknown path alike, and Express's methods
 * and `req.app` work on them as before.
 */
describe("requests and responses are made as Express's own", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the HTTP server makes them with the prototypes Express gives them, and Express changes nothing', async () => {
    const express = t.app.getHttpAdapter().getInstance() as Express;
    const server = t.app.getHttpServer() as Server;
    const made: { path: string; req: IncomingMessage; res: ServerResponse; reqProto: object; resProto: object }[] = [];
    // Before Express's listener: the prototypes each object was made with, before app.handle could set them.
    const seen = (req: IncomingMessage, res: ServerResponse) =>
      made.push({ path: req.url!, req, res, reqProto: Object.getPrototypeOf(req), resProto: Object.getPrototypeOf(res) });
    server.prependListener('request', seen);
    try {
      expect((await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
      expect((await t.http.get('/healthz')).status).toBe(200);
      const unknown = await t.http.get('/no-such-page');
      expect(unknown.status).toBe(404);
    } finally {
      server.removeListener('request', seen);
    }
    expect(made.map((m) => m.path)).toEqual(['/mcp', '/healthz', '/no-such-page']);
    for (const m of made) {
      expect(m.reqProto).toBe(express.request);
      expect(m.resProto).toBe(express.response);
      // Still what Express made: its methods, its app, Node's own classes underneath.
      expect(Object.getPrototypeOf(m.req)).toBe(express.request);
      expect(m.req).toBeInstanceOf(IncomingMessage);
      expect(m.res).toBeInstanceOf(ServerResponse);
      expect((m.req as unknown as { app: unknown }).app).toBe(express);
      expect(typeof (m.res as unknown as { json: unknown }).json).toBe('function');
    }
  });
});
