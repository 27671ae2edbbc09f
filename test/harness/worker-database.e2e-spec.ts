import { withClient } from '../support/database.js';

/**
 * The harness's promise (README, "Running the tests"): each Jest worker runs its files on a migrated
 * database of its own, never the one DATABASE_URL names, so files running at the same time in two
 * workers never share one (test/setup/worker-database.ts).
 */
describe('the test harness', () => {
  it("runs each file on its worker's own migrated database", async () => {
    const base = new URL(process.env.REBLOG_TEST_BASE_DATABASE_URL!).pathname.slice(1);
    const worker = process.env.JEST_WORKER_ID ?? '1';
    const { name, migrated } = await withClient(process.env.DATABASE_URL!, async (c) => {
      const { rows } = await c.query(`SELECT current_database() AS name, to_regclass('activity_log') IS NOT NULL AS migrated`);
      return rows[0] as { name: string; migrated: boolean };
    });
    expect(name).toBe(`${base}_w${worker}`);
    expect(migrated).toBe(true);
  });
});
