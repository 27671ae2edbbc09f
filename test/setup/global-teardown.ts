import { rmSync } from 'node:fs';
import pg from 'pg';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres.js';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__REBLOG_TEST_DB__ as { db: EmbeddedPostgres; dir: string } | undefined;
  if (state) {
    // The embedded PostgreSQL goes with its folder, the workers' databases with it.
    await state.db.stop();
    rmSync(state.dir, { recursive: true, force: true });
    return;
  }
  // On a DATABASE_URL given, the workers' databases are dropped (what the files made there is theirs to drop).
  const workers = ((globalThis as Record<string, unknown>).__REBLOG_TEST_WORKER_DATABASES__ ?? []) as string[];
  const admin = new pg.Client({ connectionString: process.env.REBLOG_TEST_BASE_DATABASE_URL });
  await admin.connect();
  try {
    for (const url of workers) await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
