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
    expect(hit()).toEqual({
      totalHits: 5,
      timeToExpire: 1,
      isBlocked: true,
      timeToBlockExpire: 1,
      retryAfterMs: 500,
      resetMs: 500,
      waitMs: 0,
      startsAt: 0,
      slot: '',
    });
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

  describe('reserve: a request over the limit holds the next free slot', () => {
    const take = (key = 'k', maxWait = 1_000) => store.hit(key, 1_000, 5, maxWait);

    it('starts 5 now, gives the next 5 the slots a second after each of them, and refuses the 11th at once', () => {
      const first = Array.from({ length: 5 }, (_, i) => {
        now = 1_000_000 + i * 10;
        return take();
      });
      expect(first.map((r) => r.waitMs)).toEqual([0, 0, 0, 0, 0]);
      now = 1_000_100;
      const waiting = Array.from({ length: 5 }, () => take());
      expect(waiting.every((r) => !r.isBlocked)).toBe(true);
      expect(waiting.map((r) => r.startsAt)).toEqual([1_001_000, 1_001_010, 1_001_020, 1_001_030, 1_001_040]);
      expect(waiting.map((r) => r.waitMs)).toEqual([900, 910, 920, 930, 940]);
      // The next slot is 1,900 ms away (a second after the first that waits), and 5 already wait:
      // refused, holding nothing; sent 900 ms later it could start within its wait.
      expect(take()).toMatchObject({ isBlocked: true, retryAfterMs: 900 });
      expect(take('k', 10_000)).toMatchObject({ isBlocked: true });
    });

    it('never gives more than 5 starts within any second, nor more than 5 waiting, under a steady 20 a second', () => {
      const starts: number[] = [];
      let refused = 0;
      for (let i = 0; i < 100; i++) {
        now = 1_000_000 + i * 50;
        const r = take();
        if (r.isBlocked) refused++;
        else starts.push(r.startsAt);
        const ahead = starts.filter((s) => s > now).length;
        expect(ahead).toBeLessThanOrEqual(5);
      }
      starts.sort((a, b) => a - b);
      for (let i = 5; i < starts.length; i++) expect(starts[i] - starts[i - 5]).toBeGreaterThanOrEqual(1_000);
      // 5 s of arrivals: 5 starts a second, plus the slots held up to a second ahead.
      expect(starts.length).toBeGreaterThanOrEqual(25);
      expect(starts.length).toBeLessThanOrEqual(30);
      expect(refused).toBe(100 - starts.length);
    });

    it('with no wait allowed, refuses at once as before', () => {
      for (let i = 0; i < 5; i++) expect(take('k', 0).waitMs).toBe(0);
      expect(take('k', 0)).toMatchObject({ isBlocked: true, retryAfterMs: 1_000 });
    });

    it('gives back a slot whose request went away, for the next request; a started one stays counted', () => {
      for (let i = 0; i < 5; i++) take();
      now += 100;
      const waiting = Array.from({ length: 5 }, () => take());
      expect(take().isBlocked).toBe(true);
      store.free('k', waiting[2].slot);
      const next = take();
      expect(next).toMatchObject({ isBlocked: false });
      expect(next.waitMs).toBeLessThanOrEqual(1_000);
      expect(take().isBlocked).toBe(true);
      // A slot that already started cannot be given back: the window is still full.
      now = waiting[0].startsAt;
      store.free('k', waiting[0].slot);
      expect(take('k', 0).isBlocked).toBe(true);
    });
  });
});
