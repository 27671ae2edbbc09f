import type { NextFunction, Request, Response } from 'express';
import { currentRequestId, requestIdMiddleware } from '../common/request-id.js';
import { auditContextMiddleware, currentAuditContext, runAs, setAuditActor } from './audit-context.js';

/** A request as Express hands it to the app-wide middleware. */
function request(headers: Record<string, string>): Request {
  return { headers, ip: '203.0.113.7' } as unknown as Request;
}
const response = { setHeader: () => undefined } as unknown as Response;

/** Runs the two middlewares as the app mounts them and answers what `work` answers inside. */
function serve<T>(headers: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const req = request(headers);
  return new Promise<T>((resolve, reject) =>
    requestIdMiddleware(req, response, (() =>
      auditContextMiddleware(req, response, (() => void work().then(resolve, reject)) as NextFunction)) as NextFunction),
  );
}

describe('the audit context, in the request scope', () => {
  it('carries the request, then the actor the edge names, across awaits', async () => {
    const seen = await serve({ 'x-request-id': 'gw-1', 'user-agent': 'ua/1' }, async () => {
      await new Promise((r) => setImmediate(r));
      setAuditActor({ type: 'operator' });
      await Promise.resolve();
      return { context: currentAuditContext(), requestId: currentRequestId() };
    });
    expect(seen).toEqual({ context: { actor: { type: 'operator' }, ip: '203.0.113.7', userAgent: 'ua/1', requestId: 'gw-1' }, requestId: 'gw-1' });
  });

  it('names the id made for the request when the gateway sent none', async () => {
    const seen = await serve({}, async () => ({ context: currentAuditContext(), requestId: currentRequestId() }));
    expect(seen.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.context?.requestId).toBe(seen.requestId);
  });

  it('runs work as another actor within the request, and leaves the request as it was', async () => {
    const seen = await serve({ 'x-request-id': 'gw-2' }, async () => {
      setAuditActor({ type: 'credential', id: 'k1' });
      const inside = await runAs({ type: 'user', id: 'u1' }, async () => ({ context: currentAuditContext(), requestId: currentRequestId() }));
      return { inside, after: currentAuditContext()?.actor };
    });
    expect(seen.inside).toEqual({ context: { actor: { type: 'user', id: 'u1' }, ip: '203.0.113.7', userAgent: null, requestId: 'gw-2' }, requestId: 'gw-2' });
    expect(seen.after).toEqual({ type: 'credential', id: 'k1' });
  });

  it('is absent outside a request, and runAs opens one without a request id (a job acting for someone)', () => {
    expect(currentAuditContext()).toBeNull();
    setAuditActor({ type: 'operator' }); // nothing to name: no error
    expect(runAs({ type: 'operator' }, () => [currentAuditContext(), currentRequestId()])).toEqual([
      { actor: { type: 'operator' }, ip: null, userAgent: null, requestId: null },
      undefined,
    ]);
  });
});
