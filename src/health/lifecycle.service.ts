import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** Probes and scrapes keep answering while the instance drains. */
const ALWAYS_SERVED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Whether the process is draining (SIGTERM received): readiness goes false at once; after a short
 * grace new requests are refused with 503 while the ones in flight finish.
 */
@Injectable()
export class LifecycleService {
  private drainingSince: number | null = null;
  private refusing = false;
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  /** Called for each request refused while draining (metrics). */
  onRefused: () => void = () => undefined;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** Requests being served right now (probes excluded). */
  get inFlight(): number {
    return this.active;
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** From now on new requests are answered 503 with `Connection: close`. */
  refuseNewRequests(): void {
    this.startDraining();
    this.refusing = true;
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        done();
      });
    });
  }

  /** Express middleware, first in the chain: counts requests in flight and refuses new ones once refusing. */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    if (ALWAYS_SERVED.has(req.path)) return next();
    if (this.refusing) {
      this.onRefused();
      res.status(503).set({ Connection: 'close', 'Retry-After': '1' }).type('application/json');
      const message = 'The server is shutting down; send the request again (another instance will answer it).';
      res.send(req.path === '/mcp' ? JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }) : JSON.stringify({ error: { code: 'unavailable', message } }));
      return;
    }
    this.active++;
    let counted = true;
    res.once('close', () => {
      if (!counted) return;
      counted = false;
      if (--this.active === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
    next();
  };
}
