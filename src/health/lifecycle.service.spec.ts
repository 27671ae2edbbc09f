import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { LifecycleService } from './lifecycle.service.js';

/** A response as the middleware sees one: headers set until sent, then `close` when it is done. */
class FakeResponse extends EventEmitter {
  headersSent = false;
  readonly headers: Record<string, string> = {};
  setHeader(name: string, value: string): this {
    if (this.headersSent) throw new Error('headers already sent');
    this.headers[name] = value;
    return this;
  }
  /** Sends the headers, then closes as Node does once the answer is written. */
  finish(): void {
    this.headersSent = true;
    this.emit('close');
  }
}

const request = (path = '/mcp') => ({ path }) as Request;

/** Runs one request through the middleware; answers its response and whether it was passed on. */
function arrive(lifecycle: LifecycleService, path?: string): { res: FakeResponse; passed: boolean } {
  const res = new FakeResponse();
  let passed = false;
  lifecycle.middleware(request(path), res as unknown as Response, () => (passed = true));
  return { res, passed };
}

describe('LifecycleService', () => {
  it('counts the requests in flight until each closes, probes aside', () => {
    const lifecycle = new LifecycleService();
    const first = arrive(lifecycle);
    const second = arrive(lifecycle);
    arrive(lifecycle, '/healthz');
    expect([first.passed, second.passed]).toEqual([true, true]);
    expect(lifecycle.inFlight).toBe(2);
    first.res.finish();
    expect(lifecycle.inFlight).toBe(1);
    // A response that closes twice (or a late event) is counted once.
    first.res.emit('close');
    expect(lifecycle.inFlight).toBe(1);
    second.res.finish();
    expect(lifecycle.inFlight).toBe(0);
  });

  it('asks every response still to be sent, and only those, to close its connection once refusing', () => {
    const lifecycle = new LifecycleService();
    // Slots are emptied and reused as requests come and go: the ones answered before are never touched.
    for (let i = 0; i < 100; i++) arrive(lifecycle).res.finish();
    const sent = arrive(lifecycle);
    sent.res.headersSent = true;
    const waiting = [arrive(lifecycle), arrive(lifecycle), arrive(lifecycle), arrive(lifecycle)];
    waiting[1].res.finish();
    // Its client went away before the answer: closed with nothing sent, and no longer in flight.
    waiting[2].res.emit('close');
    lifecycle.refuseNewRequests();
    expect(waiting.map((w) => w.res.headers.Connection)).toEqual(['close', undefined, undefined, 'close']);
    expect(sent.res.headers.Connection).toBeUndefined();
    expect(lifecycle.inFlight).toBe(3);
  });

  it('is idle once the last request in flight closes, not before', async () => {
    const lifecycle = new LifecycleService();
    await lifecycle.whenIdle(60_000);
    const a = arrive(lifecycle);
    const b = arrive(lifecycle);
    let idle = false;
    const waited = lifecycle.whenIdle(60_000).then(() => (idle = true));
    a.res.finish();
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);
    b.res.finish();
    await waited;
    expect(idle).toBe(true);
  });
});
