import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** Probes and scrapes keep answering while the instance drains. */
const ALWAYS_SERVED = new Set(['/healthz', '/readyz', '/metrics']);
/** A refused request's body is read (and dropped) up to this size before the 503. */
const MAX_DRAINED_BYTES = 1024 * 1024;

/**
 * Whether the process is draining (SIGTERM received): readiness goes false at once; after a short
 * grace new requests are refused with 503 while the ones in flight finish.
 */
@Injectable()
export class LifecycleService {
  private drainingSince: number | null = null;
  private refusing = false;
  /**
   * The responses in flight, each in a slot of its own that is emptied (and reused) when it closes. Not
   * a Set: a Set that takes and drops one young object per request made V8 promote every waiting
   * response to the old generation, whole (bench/README.md, "A Set of the requests in flight").
   */
  private readonly active: (Response | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private inFlightCount = 0;
  private idleWaiters: (() => void)[] = [];
  /** When the last request (served or refused) arrived, in `Date.now()` time. */
  lastArrival = 0;
  /** Called for each request refused while draining (metrics). */
  onRefused: () => void = () => undefined;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** Requests being served right now (probes excluded). */
  get inFlight(): number {
    return this.inFlightCount;
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** From now on new requests are answered 503, and every answer closes its connection. */
  refuseNewRequests(): void {
    this.startDraining();
    this.refusing = true;
    // Answers still to come close their sockets: the client will not reuse one this instance is about to close.
    for (const res of this.active) if (res && !res.headersSent) res.setHeader('Connection', 'close');
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.inFlightCount === 0) return Promise.resolve();
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
    this.lastArrival = Date.now();
    if (this.refusing) {
      this.onRefused();
      const message = 'The server is shutting down; send the request again (another instance will answer it).';
      const body =
        req.path === '/mcp'
          ? JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } })
          : JSON.stringify({ error: { code: 'unavailable', message } });
      const answer = () => res.status(503).set({ Connection: 'close', 'Retry-After': '1' }).type('application/json').send(body);
      // Read the body first: closing a socket with unread bytes resets it, and the client would never see the 503.
      let read = 0;
      req.on('data', (chunk: Buffer) => {
        if ((read += chunk.length) > MAX_DRAINED_BYTES) req.destroy();
      });
      req.once('end', answer);
      req.resume();
      return;
    }
    const slot = this.freeSlots.pop() ?? this.active.length;
    this.active[slot] = res;
    this.inFlightCount++;
    res.once('close', () => {
      this.active[slot] = undefined;
      this.freeSlots.push(slot);
      if (--this.inFlightCount === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
    next();
  };
}
