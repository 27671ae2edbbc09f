import fc from 'fast-check';
import { ActivityWriterService, type ActivityRecord } from '../../src/activity/activity-writer.service.js';
import { ActivityWriterRepository, WRITER_CONNECTIONS } from '../../src/activity/activity-writer.repository.js';
import { Clock } from '../../src/common/clock.js';
import { activity, admin, createTenant, type Tenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { withClient } from '../support/database.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/** Every activity entry of the tenant's account. */
const entries = (t: TestApp, tenant: Tenant): Promise<{ outcome: string; count: number; method: string; error: unknown; duration_ms: number }[]> =>
  activity(t, tenant.accountId);

const sum = (xs: { count: number }[]) => xs.reduce((n, x) => n + x.count, 0);

describe('activity log', () => {
  let t: TestApp;
  let t2: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    t2 = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await t2.close();
  });

  it('records every request of a concurrent burst, each answered only after its entry is written', async () => {
    const tenant = await createTenant(t);
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => rpc(t, tenant.key, { jsonrpc: '2.0', id: i, method: i % 3 ? 'ping' : 'tools/list' })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // No flush: every answer was sent after its entry committed.
    const log = await entries(t, tenant);
    expect(log).toHaveLength(300);
    expect(sum(log)).toBe(300);
    expect(log.filter((e) => e.method === 'tools/list')).toHaveLength(100);
  });

  it('writes entries that arrive during a commit in batches of their own beside it, one per writer connection, each answered once committed', async () => {
    const tenant = await createTenant(t);
    const writer = t.app.get(ActivityWriterRepository);
    const insert = writer.insert.bind(writer);
    // Every INSERT is held (then written for real) until the test lets them go.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const batches: number[] = [];
    const spy = jest.spyOn(writer, 'insert').mockImplementation(async (rows) => {
      batches.push(rows.length);
      await held;
      return insert(rows);
    });
    const entry = (i: number): ActivityRecord => ({
      accountId: tenant.accountId,
      credential: { type: 'api_key', id: tenant.keyId, name: 'test key' },
      client: null,
      sessionId: null,
      method: `parallel-${i}`,
      tool: null,
      projectId: null,
      outcome: 'ok',
      error: null,
      durationMs: 1,
      requestId: null,
    });
    const service = t.app.get(ActivityWriterService);
    const recorded: Promise<void>[] = [];
    let answered = 0;
    try {
      // One entry every few turns of the event loop, while the commits before it are still in progress.
      for (let i = 0; i < WRITER_CONNECTIONS + 2; i++) {
        recorded.push(service.record(entry(i)).then(() => void answered++));
        for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
      }
      expect(batches).toEqual(Array.from({ length: WRITER_CONNECTIONS }, () => 1));
      expect(answered).toBe(0);
      release();
      await Promise.all(recorded);
    } finally {
      release();
      spy.mockRestore();
    }
    // The last two waited for a free connection, then went together.
    expect(batches).toEqual([...Array.from({ length: WRITER_CONNECTIONS }, () => 1), 2]);
    const methods = (await entries(t, tenant)).map((e) => e.method).sort();
    expect(methods).toEqual(Array.from({ length: WRITER_CONNECTIONS + 2 }, (_, i) => `parallel-${i}`).sort());
  });

  it('stores what PostgreSQL would refuse (NUL, lone surrogates, huge values) without losing the batch around it', async () => {
    const tenant = await createTenant(t);
    const bad = [
      '{"jsonrpc":"2.0","id":1,"method":"nul\\u0000method"}',
      '{"jsonrpc":"2.0","id":2,"method":"lone \\ud800 surrogate"}',
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'x'.repeat(500_000) }),
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bad\\u0000\\udfff","arguments":{}}}',
    ];
    const good = Array.from({ length: 50 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'ping' }));
    const answers = await Promise.all([...bad, ...good].map((body) => rpc(t, tenant.key, body)));
    expect(answers.map((a) => a.status)).toEqual([...bad.map(() => 200), ...good.map(() => 200)]);
    expect(answers.slice(0, 3).map((a) => a.body.error.code)).toEqual([-32601, -32601, -32601]);
    const log = await entries(t, tenant);
    expect(sum(log)).toBe(bad.length + good.length);
    const methods = log.map((e) => e.method);
    expect(methods).toContain('nul\uFFFDmethod');
    expect(methods).toContain('lone \uFFFD surrogate');
    expect(methods).toContain('x'.repeat(100));
    expect(JSON.stringify(log).includes('\\u0000')).toBe(false);
  });

  it('stores every text exactly as recorded, whatever characters it holds, in one batch', async () => {
    const tenant = await createTenant(t);
    // What an array literal must escape or could misread (quotes, backslashes, commas, braces, NULL, blanks),
    // then random text of every plane, NUL and lone surrogates included.
    const tricky = ['"', '\\', '\\"', 'a,b', '{x}', '}', 'NULL', 'null', '', ' ', ' padded ', "it's", '\t\n\r', 'é 中文 🙂', '\u0000', '\ud800', 'x\udfffy'];
    const random = fc.sample(fc.string({ unit: 'binary', maxLength: 40 }), { numRuns: 200, seed: 27 });
    const texts = [...tricky, ...random];
    // PostgreSQL cannot store NUL nor a lone surrogate: each becomes U+FFFD (what the writer promises).
    const stored = (text: string) => text.toWellFormed().replaceAll('\u0000', '\uFFFD');
    const service = t.app.get(ActivityWriterService);
    await Promise.all(
      texts.map((text, i) =>
        service.record({
          accountId: tenant.accountId,
          credential: { type: 'api_key', id: tenant.keyId, name: text },
          client: { name: text, version: text },
          sessionId: text,
          method: `m${i}`,
          tool: text,
          projectId: null,
          outcome: 'tool_error',
          error: { code: -32000, message: text },
          durationMs: i,
          requestId: text,
        }),
      ),
    );
    const log = await entries(t, tenant);
    expect(log).toHaveLength(texts.length);
    const byMethod = new Map(log.map((e: any) => [e.method, e]));
    texts.forEach((text, i) => {
      const want = stored(text);
      const e = byMethod.get(`m${i}`);
      expect({
        i,
        credential: e.credential.name,
        client: e.client,
        session: e.session_id,
        tool: e.tool,
        error: e.error,
        ms: e.duration_ms,
        request: e.request_id,
      }).toEqual({
        i,
        credential: want,
        client: { name: want, version: want },
        session: want,
        tool: want,
        error: { code: -32000, message: want },
        ms: i,
        request: want,
      });
    });
  });

  it('folds refusals of one credential into one entry per second, also when two instances write them, beside accepted entries', async () => {
    const tenant = await createTenant(t);
    const credential = { type: 'api_key', id: tenant.keyId, name: 'test key' };
    const second = new Date(Math.floor(Date.now() / 1000) * 1000);
    const refusal: ActivityRecord = {
      accountId: tenant.accountId,
      credential,
      client: null,
      sessionId: null,
      method: 'tools/call',
      tool: 'list_articles',
      projectId: null,
      outcome: 'rate_limited',
      error: { code: -32029, message: 'Rate limit exceeded' },
      durationMs: 1,
      requestId: null,
    };
    // Both instances' clocks, set for each refusal (record reads the clock before it returns).
    let now = second;
    for (const app of [t.app, t2.app]) jest.spyOn(app.get(Clock), 'now').mockImplementation(() => now);
    const one = t.app.get(ActivityWriterService);
    const two = t2.app.get(ActivityWriterService);
    const refuse = (instance: ActivityWriterService, ms: number) => {
      now = new Date(second.getTime() + ms);
      return instance.record(refusal);
    };
    // 400 refusals within one second from two instances, in the same batches as 100 accepted requests
    // (a batch with a folded entry is written by another statement than one without), plus 3 in the next second.
    const accept = (instance: ActivityWriterService, i: number) => instance.record({ ...refusal, outcome: 'ok', error: null, durationMs: i });
    try {
      await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 5 === 4 ? accept(i % 2 ? one : two, i) : refuse(i % 2 ? one : two, i % 1000))));
      await Promise.all([refuse(one, 1_000), refuse(two, 1_500), refuse(one, 1_999)]);
    } finally {
      jest.restoreAllMocks();
    }
    const log = await entries(t, tenant);
    expect(log.filter((e) => e.outcome === 'rate_limited').map((e) => e.count)).toEqual([3, 400]);
    const accepted = log.filter((e) => e.outcome === 'ok');
    expect(accepted.map((e) => e.count)).toEqual(Array(100).fill(1));
    expect(new Set(accepted.map((e) => e.duration_ms)).size).toBe(100);
  });

  it('writes a batch without a refusal to fold by a plain INSERT: no speculative insertion, which ON CONFLICT makes of every row', async () => {
    const tenant = await createTenant(t);
    const writer = t.app.get(ActivityWriterService);
    const record = (outcome: 'ok' | 'rate_limited') =>
      writer.record({
        accountId: tenant.accountId,
        credential: { type: 'api_key', id: tenant.keyId, name: 'test key' },
        client: null,
        sessionId: null,
        method: 'tools/call',
        tool: 'list_projects',
        projectId: null,
        outcome,
        error: null,
        durationMs: 1,
        requestId: null,
      });
    await withClient(t.config.databaseUrl!, async (c) => {
      await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
      // The WAL records confirming a speculatively inserted row of this database's activity_log, since now.
      const {
        rows: [since],
      } = await c.query(
        `SELECT pg_current_wal_insert_lsn() AS lsn,
                (SELECT oid FROM pg_database WHERE datname = current_database()) || '/' || pg_relation_filenode('activity_log') AS rel`,
      );
      const confirmed = async () => {
        // The writer commits asynchronously, and only WAL flushed to disk can be read: flush it.
        await c.query(`SELECT pg_logical_emit_message(false, 'reblog-test', '', true)`);
        const { rows } = await c.query(
          `SELECT count(*)::int AS n FROM pg_get_wal_records_info($1, pg_current_wal_flush_lsn())
            WHERE record_type = 'HEAP_CONFIRM' AND block_ref LIKE '%/' || $2 || ' %'`,
          [since.lsn, since.rel],
        );
        return rows[0].n;
      };
      await Promise.all(Array.from({ length: 50 }, () => record('ok')));
      expect(await confirmed()).toBe(0);
      await record('rate_limited');
      expect(await confirmed()).toBe(1);
    });
    expect((await entries(t, tenant)).map((e) => e.outcome).sort()).toEqual([...Array(50).fill('ok'), 'rate_limited']);
  });

  it('lists with every filter at once and pages by cursor', async () => {
    const tenant = await createTenant(t);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        rpc(t, tenant.key, { jsonrpc: '2.0', id: i, method: i % 2 ? 'tools/call' : 'ping', params: { name: 'list_projects', arguments: {} } }),
      ),
    );
    const base = `/admin/v1/accounts/${tenant.accountId}/activity?credential_id=${tenant.keyId}&method=tools%2Fcall&tool=list_projects&outcome=ok`;
    const first = await admin(t, 'get', `${base}&limit=10`, undefined, 200);
    const second = await admin(t, 'get', `${base}&limit=10&cursor=${first.next_cursor}`, undefined, 200);
    expect(first.items).toHaveLength(10);
    expect(second.items).toHaveLength(5);
    expect(second.next_cursor).toBeNull();
    const ids = [...first.items, ...second.items].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(15);
    expect([...ids].sort().reverse()).toEqual(ids);
  });
});
