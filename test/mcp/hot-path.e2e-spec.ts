import type { Express } from 'express';
import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import { PrincipalResolver } from '../../src/auth/principal.resolver.js';
import { RpcError } from '../../src/protocol/json-rpc.js';
import { SessionsService } from '../../src/mcp/sessions.service.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

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
