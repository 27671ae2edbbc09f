import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
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
  const left = () => Math.max(0, options.timeoutMs - (Date.now() - started));
  await lifecycle.whenIdle(left());
  // Closing the listener resets connections still in its accept queue: wait until clients stop
  // arriving (each is told 503 and to close) before closing it.
  while (Date.now() - lifecycle.lastArrival < QUIET_MS && left() > 0) {
    await sleep(QUIET_MS / 4);
    await lifecycle.whenIdle(left());
  }
  log(`Draining: ${lifecycle.inFlight} request(s) still in flight after ${Date.now() - started} ms; closing the listener`);
  await closeServer(app.getHttpServer() as Server, Math.max(1_000, left()));
  await app.close();
}

/** The listener closes once no request arrived for this long (or at the drain timeout). */
const QUIET_MS = 200;
/** How long accepted connections may still deliver a request (answered 503) once the listener is closed. */
const LINGER_MS = 300;

/**
 * Stops accepting connections, lets those already accepted deliver their request for a moment, then
 * closes keep-alive sockets as they go idle; forces the rest after `timeoutMs`.
 *
 * Not `server.close()`: since Node 19 it also closes idle connections at once, and a connection
 * accepted a moment ago, whose request is still on its way, counts as idle: its client would see a
 * reset instead of an answer.
 */
async function closeServer(server: Server, timeoutMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((done) => NetServer.prototype.close.call(server, () => done()));
  await sleep(LINGER_MS);
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
  server.closeIdleConnections();
  await closed;
  clearInterval(idle);
  clearTimeout(force);
}
