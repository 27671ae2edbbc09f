import { randomUUID } from 'node:crypto';
import { v7 } from 'uuid';
import { ActivityWriterRepository, type ActivityInsert } from '../../src/activity/activity-writer.repository.js';
import { ActivityReportsService, CSV_COLUMNS, type ActivityFilter, type ActivityScope } from '../../src/activity/activity-reports.service.js';
import { Clock } from '../../src/common/clock.js';
import { DomainError } from '../../src/common/domain-error.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/**
 * The data side of the console's Activity page (docs/console.md#activity): filters, a member's scope,
 * cursor pages, the chart's UTC buckets and the CSV export, through ActivityReportsService on the real database.
 * Entries are written through the repository with chosen times, the id made in the same millisecond
 * as `at` (as ActivityWriterService.record does).
 */
describe('console activity (ActivityReportsService)', () => {
  let t: TestApp;
  let service: ActivityReportsService;
  let repository: ActivityWriterRepository;
  beforeAll(async () => {
    t = await startTestApp();
    service = t.app.get(ActivityReportsService);
    repository = t.app.get(ActivityWriterRepository);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => t.close());

  function entry(accountId: string, at: Date, over: Partial<ActivityInsert> = {}): ActivityInsert {
    return {
      id: v7({ msecs: at.getTime() }),
      at,
      account_id: accountId,
      credential_type: 'api_key',
      credential_id: over.credential_id ?? randomUUID(),
      credential_name: 'key',
      client_name: 'claude-code',
      client_version: '1.0.0',
      session_id: null,
      method: 'tools/call',
      tool: 'list_articles',
      project_id: null,
      outcome: 'ok',
      error: null,
      duration_ms: 3,
      count: 1,
      fold_key: null,
      request_id: null,
      ...over,
    };
  }

  /** Every entry of the listing, page by page (`limit` each), as ids; fails on a repeated id. */
  async function walk(accountId: string, filter: ActivityFilter, limit: number, scope?: ActivityScope): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 1_000; i++) {
      const page = await service.list(accountId, filter, limit, cursor, scope);
      ids.push(...page.items.map((e) => e.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(new Set(ids).size).toBe(ids.length);
    return ids;
  }

  const newestFirst = (rows: ActivityInsert[]) => [...rows].sort((a, b) => (a.id < b.id ? 1 : -1)).map((r) => r.id);

  async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    return text;
  }

  describe('filters', () => {
    const accountId = randomUUID();
    const other = randomUUID();
    const [keyA, keyB] = [randomUUID(), randomUUID()];
    const base = Date.parse('2026-11-30T12:00:00.000Z');
    const rows: ActivityInsert[] = [
      entry(accountId, new Date(base - 3_600_000), { credential_id: keyA, outcome: 'ok', tool: 'list_articles', client_name: 'claude-code' }),
      entry(accountId, new Date(base - 1), { credential_id: keyA, outcome: 'denied', tool: 'delete_article', client_name: 'cursor' }),
      entry(accountId, new Date(base), { credential_id: keyB, outcome: 'tool_error', tool: 'get_article', client_name: 'claude-code' }),
      entry(accountId, new Date(base + 1), { credential_id: keyB, outcome: 'ok', tool: null, method: 'tools/list', client_name: null }),
      entry(accountId, new Date(base + 3_600_000), { credential_id: keyA, outcome: 'rate_limited', tool: 'list_articles', client_name: 'cursor', count: 7 }),
      // Another account's entry with the same credential and client: never in this account's listing.
      entry(other, new Date(base), { credential_id: keyA, client_name: 'cursor' }),
    ];
    const ids = (pick: (r: ActivityInsert) => boolean) => newestFirst(rows.filter((r) => r.account_id === accountId && pick(r)));
    beforeAll(() => repository.insert(rows));

    it.each<[string, ActivityFilter, (r: ActivityInsert) => boolean]>([
      ['none', {}, () => true],
      ['outcome', { outcome: 'denied' }, (r) => r.outcome === 'denied'],
      ['outcome ok', { outcome: 'ok' }, (r) => r.outcome === 'ok'],
      ['tool', { tool: 'list_articles' }, (r) => r.tool === 'list_articles'],
      ['method', { method: 'tools/list' }, (r) => r.method === 'tools/list'],
      ['credential', { credential_id: keyB }, (r) => r.credential_id === keyB],
      ['client name', { client_name: 'cursor' }, (r) => r.client_name === 'cursor'],
      ['client name, exactly', { client_name: 'Cursor' }, () => false],
      ['from (inclusive)', { from: '2026-11-30T12:00:00.000Z' }, (r) => r.at.getTime() >= base],
      ['to (exclusive)', { to: '2026-11-30T12:00:00Z' }, (r) => r.at.getTime() < base],
      [
        'from and to, with an offset',
        { from: '2026-11-30T12:59:59.999+01:00', to: new Date(base + 1) },
        (r) => r.at.getTime() >= base - 1 && r.at.getTime() < base + 1,
      ],
      [
        'client and outcome and range',
        { client_name: 'cursor', outcome: 'rate_limited', from: new Date(base) },
        (r) => r.client_name === 'cursor' && r.outcome === 'rate_limited',
      ],
    ])('%s', async (_, filter, pick) => {
      expect(await walk(accountId, filter, 2)).toEqual(ids(pick));
    });

    it('a member sees only the entries of their own credentials, whatever the filter asks', async () => {
      expect(await walk(accountId, {}, 2, { credentialIds: [keyA] })).toEqual(ids((r) => r.credential_id === keyA));
      expect(await walk(accountId, { credential_id: keyB }, 2, { credentialIds: [keyA] })).toEqual([]);
      expect(await walk(accountId, { client_name: 'claude-code' }, 2, { credentialIds: [keyA] })).toEqual(
        ids((r) => r.credential_id === keyA && r.client_name === 'claude-code'),
      );
      expect(await walk(accountId, {}, 1, { credentialIds: [keyA, keyB, keyA] })).toEqual(ids(() => true));
      // No grants: nothing, not the whole account.
      expect(await walk(accountId, {}, 50, { credentialIds: [] })).toEqual([]);
      // Their credential in another account: not there either.
      expect(await walk(randomUUID(), {}, 50, { credentialIds: [keyA] })).toEqual([]);
    });

    it('items have the admin API shape; a folded entry keeps its count', async () => {
      const page = await service.list(accountId, { outcome: 'rate_limited' });
      expect(page.items).toEqual([
        expect.objectContaining({
          outcome: 'rate_limited',
          count: 7,
          client: { name: 'cursor', version: '1.0.0' },
          credential: { type: 'api_key', id: keyA, name: 'key' },
        }),
      ]);
    });
  });

  it('cursor pages are stable when many entries share one millisecond, and newer entries do not shift them', async () => {
    const accountId = randomUUID();
    const at = new Date('2026-11-30T08:00:00.000Z');
    const rows = Array.from({ length: 25 }, () => entry(accountId, at));
    await repository.insert(rows);
    expect(await walk(accountId, {}, 7)).toEqual(newestFirst(rows));

    const first = await service.list(accountId, {}, 7);
    await repository.insert([entry(accountId, new Date(at.getTime() + 1)), entry(accountId, at)]);
    const second = await service.list(accountId, {}, 7, first.next_cursor!);
    const before = newestFirst(rows);
    // The page after the cursor is what followed it before the inserts, unless the new same-millisecond entry sorts into it.
    expect(second.items.every((e) => e.id < first.items[6].id)).toBe(true);
    expect(second.items.map((e) => e.id).filter((id) => before.includes(id))).toEqual(
      before.slice(7, 7 + second.items.filter((e) => before.includes(e.id)).length),
    );
  });

  describe('chart', () => {
    const now = new Date('2026-11-30T12:30:00.000Z');
    const accountId = randomUUID();
    const [mine, theirs] = [randomUUID(), randomUUID()];
    const at = (iso: string) => new Date(iso);
    beforeAll(() =>
      repository.insert([
        entry(accountId, at('2026-11-29T12:59:59.999Z'), { credential_id: mine }), // before the span
        entry(accountId, at('2026-11-29T13:00:00.000Z'), { credential_id: mine }), // first bucket's first ms
        entry(accountId, at('2026-11-30T10:59:59.999Z'), { credential_id: mine, outcome: 'denied' }),
        entry(accountId, at('2026-11-30T11:00:00.000Z'), { credential_id: theirs }),
        entry(accountId, at('2026-11-30T11:59:59.999Z'), { credential_id: mine, outcome: 'rate_limited', count: 40 }),
        entry(accountId, at('2026-11-30T12:00:00.000Z'), { credential_id: theirs, outcome: 'tool_error' }),
        entry(accountId, at('2026-11-30T12:30:00.000Z'), { credential_id: mine }), // now: in
        entry(accountId, at('2026-11-30T12:30:00.001Z'), { credential_id: mine }), // after now: out
        entry(randomUUID(), at('2026-11-30T12:00:00.000Z'), { credential_id: mine }), // another account
      ]),
    );
    const clockAt = (d: Date) => jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date(d));
    const nonZero = (chart: Awaited<ReturnType<ActivityReportsService['chart']>>) =>
      chart.buckets.filter((b) => b.total).map((b) => [b.start.toISOString(), b.total, Object.fromEntries(Object.entries(b.outcomes).filter(([, n]) => n))]);

    it('24 UTC hours stacked by outcome, each entry in the hour it starts, the span ending now', async () => {
      clockAt(now);
      const chart = await service.chart(accountId, '24h', 'hour');
      expect(chart.buckets).toHaveLength(24);
      expect(chart.buckets[0].start.toISOString()).toBe('2026-11-29T13:00:00.000Z');
      expect(chart.buckets[23].start.toISOString()).toBe('2026-11-30T12:00:00.000Z');
      expect(nonZero(chart)).toEqual([
        ['2026-11-29T13:00:00.000Z', 1, { ok: 1 }],
        ['2026-11-30T10:00:00.000Z', 1, { denied: 1 }],
        ['2026-11-30T11:00:00.000Z', 41, { ok: 1, rate_limited: 40 }],
        ['2026-11-30T12:00:00.000Z', 2, { ok: 1, tool_error: 1 }],
      ]);
    });

    it('a member’s chart counts only their credentials', async () => {
      clockAt(now);
      expect(nonZero(await service.chart(accountId, '24h', 'hour', { credentialIds: [mine] }))).toEqual([
        ['2026-11-29T13:00:00.000Z', 1, { ok: 1 }],
        ['2026-11-30T10:00:00.000Z', 1, { denied: 1 }],
        ['2026-11-30T11:00:00.000Z', 40, { rate_limited: 40 }],
        ['2026-11-30T12:00:00.000Z', 1, { ok: 1 }],
      ]);
      expect(nonZero(await service.chart(accountId, '24h', 'hour', { credentialIds: [] }))).toEqual([]);
    });

    it('7 days by UTC day or by hour', async () => {
      clockAt(now);
      const daily = await service.chart(accountId, '7d', 'day');
      expect(daily.buckets.map((b) => b.start.toISOString())).toEqual(['24', '25', '26', '27', '28', '29', '30'].map((d) => `2026-11-${d}T00:00:00.000Z`));
      expect(nonZero(daily)).toEqual([
        ['2026-11-29T00:00:00.000Z', 2, { ok: 2 }],
        ['2026-11-30T00:00:00.000Z', 44, { ok: 2, denied: 1, tool_error: 1, rate_limited: 40 }],
      ]);
      const hourly = await service.chart(accountId, '7d', 'hour');
      expect(hourly.buckets).toHaveLength(168);
      expect(hourly.buckets.reduce((n, b) => n + b.total, 0)).toBe(46);
    });
  });

  describe('CSV export', () => {
    it('has a header and every filtered entry, newest first, across many pages', async () => {
      const accountId = randomUUID();
      const start = Date.parse('2026-11-01T00:00:00.000Z');
      const rows = Array.from({ length: 2_345 }, (_, i) => entry(accountId, new Date(start + Math.floor(i / 3)), { outcome: i % 5 ? 'ok' : 'invalid' }));
      await repository.insert(rows);
      const lines = (await readAll(service.exportCsv(accountId, { outcome: 'invalid' }))).trimEnd().split('\n');
      expect(lines[0]).toBe(CSV_COLUMNS.join(','));
      expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(newestFirst(rows.filter((r) => r.outcome === 'invalid')));
      const all = (await readAll(service.exportCsv(accountId, {}))).trimEnd().split('\n');
      expect(all).toHaveLength(2_346);
    });

    it('quotes what needs quoting and defuses formulas', async () => {
      const accountId = randomUUID();
      const credentialId = randomUUID();
      const at = new Date('2026-11-30T12:00:00.000Z');
      const names = ['=HYPERLINK("http://evil")', '+1', '-2', '@SUM(A1)', '\tq', '\rr', 'a,b', 'say "hi"', 'two\nlines', 'plain'];
      await repository.insert(
        names.map((name, i) =>
          entry(accountId, new Date(at.getTime() + i), {
            credential_id: credentialId,
            client_name: name,
            error: JSON.stringify({ code: -32602, message: '=1+1' }),
            outcome: 'invalid',
            session_id: i ? null : 'sess-1',
          }),
        ),
      );
      const text = await readAll(service.exportCsv(accountId, { credential_id: credentialId }));
      const clients = text
        .split(/\n(?=[0-9a-f]{8}-)/)
        .slice(1)
        .reverse()
        .map((line) => line.split(',').slice(5).join(','));
      expect(clients.map((c) => c.split(',1.0.0,')[0])).toEqual([
        `"'=HYPERLINK(""http://evil"")"`,
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "'\tq",
        `"'\rr"`,
        '"a,b"',
        '"say ""hi"""',
        '"two\nlines"',
        'plain',
      ]);
      // The error's code is a number (no prefix), its message a formula (prefixed); the time is ISO 8601 UTC.
      expect(clients[0]).toContain(",sess-1,tools/call,list_articles,,invalid,-32602,'=1+1,3,1");
      expect(text).toContain(',2026-11-30T12:00:00.000Z,api_key,');
    });
  });

  describe('bad filter values are refused with the field named', () => {
    const accountId = randomUUID();
    it.each<[string, () => unknown, string]>([
      ['outcome', () => service.list(accountId, { outcome: 'nope' }), 'outcome'],
      ['credential_id', () => service.list(accountId, { credential_id: 'not-a-uuid' }), 'credential_id'],
      ['empty tool', () => service.list(accountId, { tool: '' }), 'tool'],
      ['long client name', () => service.list(accountId, { client_name: 'x'.repeat(201) }), 'client_name'],
      ['from in words', () => service.list(accountId, { from: 'yesterday' }), 'from'],
      ['from without an offset', () => service.list(accountId, { from: '2026-11-30T12:00:00' }), 'from'],
      ['impossible date', () => service.list(accountId, { to: '2026-02-31T12:00:00Z' }), 'to'],
      ['invalid Date', () => service.list(accountId, { to: new Date(NaN) }), 'to'],
      ['from after to', () => service.list(accountId, { from: '2026-11-30T12:00:00Z', to: '2026-11-30T11:00:00Z' }), 'from'],
      ['limit 0', () => service.list(accountId, {}, 0), 'limit'],
      ['limit 201', () => service.list(accountId, {}, 201), 'limit'],
      ['scope', () => service.list(accountId, {}, 50, undefined, { credentialIds: ['nope'] }), 'credentialIds'],
      ['chart span', () => service.chart(accountId, '30d' as '7d'), 'span'],
      ['chart bucket', () => service.chart(accountId, '24h', 'day'), 'bucket'],
      ['export outcome', () => service.exportCsv(accountId, { outcome: 'nope' }), 'outcome'],
    ])('%s', async (_, call, field) => {
      const err = await Promise.resolve()
        .then(call)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'validation_failed', details: { field } });
    });

    it('a cursor this API did not make', async () => {
      await expect(service.list(accountId, {}, 50, 'garbage')).rejects.toMatchObject({ code: 'validation_failed' });
    });
  });
});

describe('console activity filters on the admin API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('takes client_name, from and to, and refuses a time it cannot read', async () => {
    const accountId = (
      await t.http
        .post('/admin/v1/accounts')
        .set('authorization', `Bearer ${t.adminToken}`)
        .send({ name: 'Console', owner_email: 'console@example.com' })
        .expect(201)
    ).body.id;
    const at = new Date('2026-11-30T12:00:00.000Z');
    const base = {
      account_id: accountId,
      credential_type: 'api_key',
      credential_id: randomUUID(),
      credential_name: 'key',
      client_version: '1',
      session_id: null,
      method: 'tools/call',
      tool: 'list_articles',
      project_id: null,
      outcome: 'ok' as const,
      error: null,
      duration_ms: 1,
      count: 1,
      fold_key: null,
      request_id: null,
    };
    await t.app.get(ActivityWriterRepository).insert([
      { ...base, id: v7({ msecs: at.getTime() }), at, client_name: 'cursor' },
      { ...base, id: v7({ msecs: at.getTime() + 1 }), at: new Date(at.getTime() + 1), client_name: 'claude-code' },
    ]);
    const get = (query: string) => t.http.get(`/admin/v1/accounts/${accountId}/activity?${query}`).set('authorization', `Bearer ${t.adminToken}`);
    expect((await get('client_name=cursor').expect(200)).body.items.map((e: { client: { name: string } }) => e.client.name)).toEqual(['cursor']);
    expect(
      (await get(`from=${encodeURIComponent('2026-11-30T12:00:00.001Z')}`).expect(200)).body.items.map((e: { client: { name: string } }) => e.client.name),
    ).toEqual(['claude-code']);
    expect((await get('to=2026-11-30T12:00:00.001Z').expect(200)).body.items).toHaveLength(1);
    const refused = await get('from=yesterday').expect(400);
    expect(JSON.stringify(refused.body)).toContain('validation_failed');
    expect(JSON.stringify(refused.body)).toContain('from must be a time in ISO 8601');
  });
});
