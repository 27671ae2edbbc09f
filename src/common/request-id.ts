import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { AuditContext } from '../audit/audit-context.js';

/**
 * What the code serving a request can ask of it, wherever it runs: its id (every log line, activity
 * entry and span names it by) and, once its edge has opened it, its audit context (audit-context.ts).
 * A job acting for someone has an audit context and no request id. One AsyncLocalStorage holds both:
 * under Node 20 each one in use adds work to every promise the process makes (docs/architecture.md#layers).
 */
export interface RequestScope {
  requestId?: string;
  audit?: AuditContext;
}

const scopes = new AsyncLocalStorage<RequestScope>();
/** A gateway's id is kept when it is printable ASCII without spaces, at most 200 characters; else one is made. */
const ACCEPTED = /^[\x21-\x7e]{1,200}$/;

/** The request id of `header` (the gateway's `X-Request-Id`), or a new UUID. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && ACCEPTED.test(header) ? header : randomUUID();
}

/**
 * First middleware of the app: keeps the gateway's `X-Request-Id` (or makes one), echoes it in the
 * answer, and serves the rest of the request inside its scope (read by the logger and the MCP layer).
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const requestId = requestIdOf(req.headers['x-request-id']);
  req.id = requestId;
  res.setHeader('X-Request-Id', requestId);
  scopes.run({ requestId }, next);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return scopes.getStore()?.requestId;
}

/** The scope of the request (or job) being served, if any. */
export function currentRequestScope(): RequestScope | undefined {
  return scopes.getStore();
}

/** Runs `work`, and everything it starts, in `scope`. */
export function runInRequestScope<T>(scope: RequestScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** pino's mixin: the request id on every line logged while a request is served. */
export function requestIdLogMixin(): object {
  const requestId = scopes.getStore()?.requestId;
  // A new object each line: pino adds to it.
  return requestId === undefined ? {} : { requestId };
}
