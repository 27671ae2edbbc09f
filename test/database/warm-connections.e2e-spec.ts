import { DataSource } from 'typeorm';
import { WARM_CONNECTIONS } from '../../src/database/data-source.js';
import { createDatabase, withClient, type TestDatabase } from '../support/database.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { callTool, type CallOutcome } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** pg-pool closes a connection unused for this long (its default, which the pools keep). */
const IDLE_TIMEOUT_MS = 10_000;

/**
 * A client that calls a tool now and then finds the connections it needs open: the main pool keeps
 * WARM_CONNECTIONS and the activity log's writer one (bench/README.md, "After a quiet spell"). Before,
 * every call after ten quiet seconds waited for new connections and planned its statements afresh.
 */
describe('a call after a quiet spell', () => {
  let db: TestDatabase;
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    db = await createDatabase();
    // An api instance: no job worker whose polling would keep a connection busy anyway.
    t = await db.app({ ROLE: 'api' });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** The app's connections to its database, by pool (the LISTEN connection apart). */
  const connections = () =>
    withClient(db.url, async (c) => {
      const { rows } = await c.query<{ pid: number; application_name: string }>(
        `SELECT pid, application_name FROM pg_stat_activity
          WHERE datname = current_database() AND application_name IN ('reblog-mcp', 'reblog-mcp-activity')`,
      );
      return { main: rows.filter((r) => r.application_name === 'reblog-mcp'), writer: rows.filter((r) => r.application_name === 'reblog-mcp-activity') };
    });

  it('opens no connection: the main pool kept its warm ones and the writer one, while those beyond them closed', async () => {
    // A burst: calls, and more statements at once on the main pool than it keeps.
    const main = t.app.get(DataSource);
    const burst = await Promise.all([
      ...Array.from({ length: 20 }, () => callTool(t, tenant.key, 'list_projects')),
      ...Array.from({ length: WARM_CONNECTIONS + 3 }, () => main.query('SELECT pg_sleep(0.2)')),
    ]);
    expect(burst.slice(0, 20).map((c) => (c as CallOutcome).status)).toEqual(Array(20).fill(200));
    const busy = await connections();
    expect(busy.main.length).toBeGreaterThanOrEqual(WARM_CONNECTIONS + 3);
    expect(busy.writer.length).toBeGreaterThanOrEqual(1);

    await new Promise((resolve) => setTimeout(resolve, IDLE_TIMEOUT_MS + 1_500));
    const quiet = await connections();
    expect(quiet.main).toHaveLength(WARM_CONNECTIONS);
    expect(quiet.writer).toHaveLength(1);

    const after = await callTool(t, tenant.key, 'list_projects');
    expect(after).toMatchObject({ status: 200, isError: false });
    const pids = (c: Awaited<ReturnType<typeof connections>>) => [...c.main, ...c.writer].map((r) => r.pid).sort();
    expect(pids(await connections())).toEqual(pids(quiet));
  }, 30_000);
});
