import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source.js';
import { run, sql } from './sql.js';

const LOCK_KEY = 7_260_417_001; // any constant: serialises migrations of instances that start together
const LOCK = sql<[key: number]>('migrations.lock', 'SELECT pg_advisory_lock($1)');
const UNLOCK = sql<[key: number]>('migrations.unlock', 'SELECT pg_advisory_unlock($1)');

/** Runs (or reverts the last of) the migrations, one instance at a time. Returns the names applied. */
export async function migrate(url: string, direction: 'run' | 'revert' = 'run'): Promise<string[]> {
  // One connection, so the advisory lock and the migrations share a session.
  const ds = new DataSource({ ...dataSourceOptions(url, { poolSize: 1 }), logging: ['error'] });
  await ds.initialize();
  try {
    await run(ds, LOCK, [LOCK_KEY]);
    try {
      if (direction === 'revert') {
        await ds.undoLastMigration({ transaction: 'each' });
        return [];
      }
      const applied = await ds.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await run(ds, UNLOCK, [LOCK_KEY]);
    }
  } finally {
    await ds.destroy();
  }
}

/** Whether every migration the code knows has been applied (readiness). */
export async function pendingMigrations(ds: DataSource): Promise<boolean> {
  return ds.showMigrations();
}

// `node dist/src/database/migrate.js run|revert` (npm run migration:run / migration:revert)
if (process.argv[1]?.endsWith('migrate.js')) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('Set DATABASE_URL to the database to migrate.');
    process.exit(1);
  }
  migrate(url, process.argv[2] === 'revert' ? 'revert' : 'run').then(
    (names) => {
      console.log(names.length ? `Applied: ${names.join(', ')}` : 'Nothing to apply.');
    },
    (err: Error) => {
      console.error(`Migration failed: ${err.message}`);
      process.exit(1);
    },
  );
}
