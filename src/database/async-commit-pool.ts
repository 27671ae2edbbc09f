import type { Logger } from '@nestjs/common';
import pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * A small pool beside TypeORM's, on the same database, whose transactions commit asynchronously:
 * a commit returns once PostgreSQL holds it in its WAL buffers, without waiting for the disk flush
 * (`synchronous_commit = off`). Nothing is lost when this process dies, since PostgreSQL already has
 * it; only a crash of PostgreSQL itself, or of its host, within about 0.6 s (three
 * `wal_writer_delay`s) can lose the last commits. It is bounded like the main pool: statements time
 * out, connecting times out, and a vanished host is noticed by TCP keepalive.
 */
export function openAsyncCommitPool(db: DataSource, name: string, max: number, log: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: (db.options as { url?: string }).url,
    max,
    // One connection stays open when the pool is unused, so the first write after a quiet spell does not wait for a
    // new one (the others close after pg-pool's 10 s, as in the main pool: data-source.ts).
    min: 1,
    application_name: `reblog-mcp-${name}`,
    options: '-c synchronous_commit=off -c statement_timeout=15000',
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
  });
  // An idle connection dropped by the server: the pool replaces it; say so, never crash.
  pool.on('error', (err) => log.warn(`${name} connection: ${err.message}`));
  return pool;
}
