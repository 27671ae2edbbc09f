import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { LifecycleService } from './lifecycle.service.js';

/** How {@link drainAndClose} paces a shutdown. */
export interface DrainOptions {
  /** How long requests are still served after readiness went false, so the gateway stops routing here. */
  graceMs: number;
  /** The longest the requests in flight are waited for before their sockets are closed. */
  timeoutMs: number;
  log?: (line: string) => void;
}

/**
 * SIGTERM: readiness goes false; after `graceMs` new requests get 503; the requests in flight
 * finish (each after its activity entry is durable); then the listener closes and the app shuts
 * down, which flushes the activity log, hands running jobs back and closes Redis and the pool.
 */
export async function drainAndClose(app: INestApplication, options: DrainOptions): Promise<void> {
  const log = options.log ?? (() => undefined);
  const lifecycle = app.get(LifecycleService);
  lifecycle.startDraining();
  log(`Draining: readiness is false; serving for ${options.graceMs} ms more`);
  await sleep(options.graceMs);
  lifecycle.refuseNewRequests();
  const started = Date.now();
  await lifecycle.whenIdle(options.timeoutMs);
  log(`Draining: ${lifecycle.inFlight} request(s) still in flight after ${Date.now() - started} ms; closing the listener`);
  await closeServer(app.getHttpServer() as Server, Math.max(1_000, options.timeoutMs - (Date.now() - started)));
  await app.close();
}

/** Stops listening and closes keep-alive sockets as they go idle; forces the rest after `timeoutMs`. */
function closeServer(server: Server, timeoutMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((done) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(force);
      done();
    });
    server.closeIdleConnections();
  });
}
