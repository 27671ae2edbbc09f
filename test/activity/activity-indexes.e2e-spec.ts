import { randomUUID } from 'node:crypto';
import '../../src/activity/activity-reports.repository.js';
import { newId } from '../../src/common/ids.js';
import { migrate } from '../../src/database/migrate.js';
import { declaredHotStatements } from '../../src/database/sql.js';
import { createDatabase, withClient, type TestDatabase } from '../support/database.js';

/** The activity log's filter indexes (docs/scaling.md#the-activity-log): each ends in the id. */
const FILTER_INDEXES = [
  'activity_account_idx',
  'activity_credential_idx',
  'activity_outcome_idx',
  'activity_tool_idx',
  'activity_method_idx',
  'activity_client_idx',
];

describe('activity log indexes: ascending in the id, read backwards for every newest-first page', () => {
  let db: TestDatabase;
  const accountId = randomUUID();
  const credentials = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    db = await createDatabase();
    // 20,000 entries in the order the writer makes them (ids increasing), one in a hundred of the account,
    // whose every filter matches a few of them (so the planner has an index to prefer to the primary key).
    const rows = Array.from({ length: 20_000 }, (_, i) => {
      const ours = i % 100 === 0;
      const rare = ours && (i / 100) % 10 === 0;
      return {
        id: newId(),
        account: ours ? accountId : randomUUID(),
        credential: credentials[rare ? 1 : 0],
        tool: rare ? 'get_article' : 'list_articles',
        method: rare ? 'tools/list' : 'tools/call',
        outcome: rare ? 'tool_error' : 'ok',
        client: rare ? 'cursor' : 'claude-code',
      };
    });
    await withClient(db.url, async (c) => {
      await c.query(
        `INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, client_name, method, tool, outcome, duration_ms)
         SELECT id, now(), account_id, 'api_key', credential_id, 'key', client_name, method, tool, outcome, 1
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[])
             AS r(id, account_id, credential_id, client_name, method, tool, outcome)`,
        [
          rows.map((r) => r.id),
          rows.map((r) => r.account),
          rows.map((r) => r.credential),
          rows.map((r) => r.client),
          rows.map((r) => r.method),
          rows.map((r) => r.tool),
          rows.map((r) => r.outcome),
        ],
      );
      await c.query('ANALYZE activity_log');
    });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const definitions = () =>
    withClient(db.url, async (c) => {
      const { rows } = await c.query<{ indexname: string; indexdef: string }>(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'activity_log'`);
      return new Map(rows.map((r) => [r.indexname, r.indexdef]));
    });

  it('each filter index ends in id ascending (an entry is appended at its right end)', async () => {
    const defs = await definitions();
    for (const name of FILTER_INDEXES) {
      expect(defs.get(name)).toMatch(/, id\)( WHERE .*)?$/);
      expect(defs.get(name)).not.toMatch(/DESC/);
    }
  });

  /** The plan of `text` with `params`, with every way to avoid the index made costly, as one line per node. */
  const plan = (text: string, params: unknown[]) =>
    withClient(db.url, async (c) => {
      await c.query('SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off');
      const { rows } = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });

  it.each([
    ['every entry', 'activity.list', () => [accountId, 50], 'activity_account_idx'],
    ['the next page', 'activity.list_after', () => [accountId, newId(), 50], 'activity_account_idx'],
    ['a member (per credential, merged)', 'activity.list_credentials', () => [accountId, credentials, 50], 'activity_credential_idx'],
  ])('the console page of %s (%s) is an index scan backwards, with no sort of the entries', async (_what, name, params, index) => {
    const text = declaredHotStatements().get(name)!;
    const shown = await plan(text, params());
    expect(shown).toContain(`Index Scan Backward using ${index}`);
    // A member's pages are merged by one small sort of at most limit × credentials rows, above the scans.
    if (name === 'activity.list_credentials') expect(shown.match(/Sort {2}\(cost/g) ?? []).toHaveLength(1);
    else expect(shown).not.toMatch(/Sort/);
  });

  it.each([
    ['credential_id = $2', 'activity_credential_idx'],
    ['tool = $2', 'activity_tool_idx'],
    ['client_name = $2', 'activity_client_idx'],
    ['outcome = $2', 'activity_outcome_idx'],
    ['method = $2', 'activity_method_idx'],
  ])('a page filtered by %s reads %s backwards', async (condition, index) => {
    const value = {
      activity_credential_idx: credentials[1],
      activity_tool_idx: 'get_article',
      activity_client_idx: 'cursor',
      activity_outcome_idx: 'tool_error',
      activity_method_idx: 'tools/list',
    }[index];
    const shown = await plan(`SELECT * FROM activity_log WHERE account_id = $1 AND ${condition} ORDER BY id DESC LIMIT 50`, [accountId, value]);
    expect(shown).toContain(`Index Scan Backward using ${index}`);
    expect(shown).not.toMatch(/Sort/);
  });

  it('the migration reverts to the descending indexes and runs again, the entries untouched', async () => {
    const count = () => withClient(db.url, async (c) => (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM activity_log')).rows[0].n);
    await migrate(db.url, 'revert');
    const reverted = await definitions();
    for (const name of FILTER_INDEXES) expect(reverted.get(name)).toMatch(/, id DESC\)( WHERE .*)?$/);
    expect(await migrate(db.url)).toEqual(['ActivityAscendingIndexes1766400000000']);
    const again = await definitions();
    for (const name of FILTER_INDEXES) expect(again.get(name)).not.toMatch(/DESC/);
    expect(await count()).toBe(20_000);
  });
});
