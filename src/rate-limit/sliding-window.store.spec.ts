import { SlidingWindowStore } from './sliding-window.store.js';

describe('SlidingWindowStore', () => {
  let now: number;
  let store: SlidingWindowStore;
  const hit = (key = 'k') => store.hit(key, 1_000, 5);

  beforeEach(() => {
    now = 1_000_000;
    store = new SlidingWindowStore(() => now);
  });
  afterEach(() => store.onApplicationShutdown());

  it('accepts `limit` hits, then refuses with the time until the oldest leaves the window', () => {
    for (let i = 1; i <= 5; i++) {
      expect(hit()).toMatchObject({ isBlocked: false, totalHits: i });
      now += 100;
    }
    // Hits at 0, 100, ..., 400 ms; now = 500 ms: the first leaves the window at 1000 ms.
    expect(hit()).toEqual({ totalHits: 5, timeToExpire: 1, isBlocked: true, timeToBlockExpire: 1, retryAfterMs: 500, resetMs: 500 });
  });

  it('does not count refusals: a hit is accepted as soon as the oldest accepted one is a window old', () => {
    for (let i = 0; i < 5; i++) hit();
    for (let i = 0; i < 50; i++) {
      now += 19;
      expect(hit().isBlocked).toBe(true);
    }
    now = 1_000_000 + 999;
    expect(hit().isBlocked).toBe(true);
    now = 1_000_000 + 1_000;
    // All five left together: five more fit, the sixth does not.
    for (let i = 0; i < 5; i++) expect(hit().isBlocked).toBe(false);
    expect(hit()).toMatchObject({ isBlocked: true, retryAfterMs: 1_000 });
  });

  it('never accepts more than `limit` within any one-window span, whatever the arrival pattern', () => {
    const accepted: number[] = [];
    // 20 requests a second at irregular intervals for 5 s.
    for (let i = 0; i < 100; i++) {
      now += [13, 71, 40, 9, 117][i % 5];
      if (!hit().isBlocked) accepted.push(now);
    }
    for (let i = 5; i < accepted.length; i++) expect(accepted[i] - accepted[i - 5]).toBeGreaterThanOrEqual(1_000);
    expect(accepted.length).toBeGreaterThanOrEqual(20);
  });

  it('keeps one window per key', () => {
    for (let i = 0; i < 5; i++) hit('a');
    expect(hit('a').isBlocked).toBe(true);
    expect(hit('b')).toMatchObject({ isBlocked: false, totalHits: 1 });
  });

  it('answers through the ThrottlerStorage interface of @nestjs/throttler', async () => {
    await expect(store.increment('k', 1_000, 1, 0, 'per-credential')).resolves.toMatchObject({ isBlocked: false, totalHits: 1 });
    await expect(store.increment('k', 1_000, 1, 0, 'per-credential')).resolves.toMatchObject({ isBlocked: true, timeToBlockExpire: 1, retryAfterMs: 1_000 });
  });
});
