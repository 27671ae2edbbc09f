import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import { migrate } from '../../src/database/migrate.js';
import { workerDatabaseUrl } from './worker-database.js';

/**
 * One real PostgreSQL per test run: the embedded one in a temp folder, unless DATABASE_URL is set;
 * on it, a migrated database for each Jest worker (test/setup/worker-database.ts).
 */
export default async function globalSetup({ maxWorkers }: { maxWorkers: number }): Promise<void> {
  // Names this run for what is done once per run (the server build, test/support/server-process.ts),
  // even when DATABASE_URL, given, is the same from one run to the next.
  process.env.REBLOG_TEST_RUN = randomBytes(8).toString('hex');
  if (!process.env.DATABASE_URL) {
    const dir = mkdtempSync(join(tmpdir(), 'reblog-test-'));
    chmodSync(dir, 0o755);
    const db = await EmbeddedPostgres.start({
      dir: join(dir, 'pg'),
      database: 'reblog_test',
      // Durability is not what the tests measure; speed is what they need.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    });
    process.env.DATABASE_URL = db.url;
    (globalThis as Record<string, unknown>).__REBLOG_TEST_DB__ = { db, dir };
  }
  const base = process.env.DATABASE_URL;
  process.env.REBLOG_TEST_BASE_DATABASE_URL = base;
  const workers = Array.from({ length: Math.max(1, maxWorkers) }, (_, i) => workerDatabaseUrl(base, i + 1));
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    for (const url of workers) {
      const name = new URL(url).pathname.slice(1);
      // Left by an earlier run on the same DATABASE_URL that did not end.
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${name}"`);
    }
  } finally {
    await admin.end();
  }
  await Promise.all(workers.map((url) => migrate(url)));
  (globalThis as Record<string, unknown>).__REBLOG_TEST_WORKER_DATABASES__ = workers;
  // The MCP Apps views the server reads from dist/views (under half a second; npm run build does the same).
  const views = spawnSync(process.execPath, [resolve(__dirname, '..', '..', 'scripts', 'build-views.mjs')], { encoding: 'utf8' });
  if (views.status !== 0) throw new Error(`Building the MCP Apps views failed: ${views.stderr || views.stdout}`);
  // TypeORM keeps its entity metadata on globalThis, and Jest hands this process's globals to every test
  // file's sandbox: left here, each file's entities (and through them all the modules it loaded) would
  // be pushed into this one store and kept until the run ends (about 40 MB a file, 4 GB by the last).
  delete (globalThis as Record<string, unknown>).typeormMetadataArgsStorage;
}
