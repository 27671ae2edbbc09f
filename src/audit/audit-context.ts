import type { NextFunction, Request, Response } from 'express';
import { currentRequestScope, runInRequestScope } from '../common/request-id.js';

/**
 * Who performs an administrative act: the operator (admin token), a signed-in person, an OAuth client
 * (revoking its token), or a bearer credential on /mcp (an API key or grant configuring the writer).
 */
export type Actor = { type: 'operator' } | { type: 'user'; id: string; email?: string } | { type: 'client'; id: string } | { type: 'credential'; id: string };

/** The request an act comes from, as the audit trail records it; `actor` is set by the edge that authenticated it. */
export interface AuditContext {
  actor: Actor | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

/**
 * Opens a request's audit context (its IP, user agent and `X-Request-Id`) in the request's scope
 * (common/request-id.ts); the edge's guard names the actor later with {@link setAuditActor}. Mounted
 * after the body parsers: a scope opened before a stream is read would not survive its callbacks, so
 * the scope is opened anew here, with the request's id.
 */
export function auditContextMiddleware(req: Request, _res: Response, next: NextFunction): void {
  // The request's id as the whole app names it (the gateway's X-Request-Id, or one made for it).
  const requestId = currentRequestScope()?.requestId ?? (typeof req.id === 'string' ? req.id : req.headers['x-request-id']);
  const named = typeof requestId === 'string' && requestId !== '' ? requestId.slice(0, 200) : undefined;
  runInRequestScope(
    {
      requestId: named,
      audit: { actor: null, ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null, requestId: named ?? null },
    },
    next,
  );
}

/** Names who performs the acts of the current request (an edge calls it once it has authenticated them). */
export function setAuditActor(actor: Actor): void {
  const context = currentRequestScope()?.audit;
  if (context) context.actor = actor;
}

/** The current request's audit context, or null outside a request (a job, a test's direct call). */
export function currentAuditContext(): AuditContext | null {
  return currentRequestScope()?.audit ?? null;
}

/** Runs `work` as `actor`, within the current request's context when there is one (a job acting for someone). */
export function runAs<T>(actor: Actor, work: () => T): T {
  const scope = currentRequestScope();
  const current = scope?.audit;
  return runInRequestScope(
    { requestId: scope?.requestId, audit: { actor, ip: current?.ip ?? null, userAgent: current?.userAgent ?? null, requestId: current?.requestId ?? null } },
    work,
  );
}
