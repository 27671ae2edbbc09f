import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/database/migrate.js';

/**
 * A database of its own on the test run's Postgres, migrated. Every app of the test run runs a job
 * worker (ROLE=all); a separate database keeps other test files' workers from claiming these
 * jobs with another configuration, and this file's workers from claiming theirs.
 */
export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL!;
  const name = `reblog_jobs_${randomBytes(5).toString('hex')}`;
  await withClient(base, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return {
    url: url.toString(),
    drop: () => withClient(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Polls `read` until `done(value)` holds, failing after `timeoutMs` with the last value seen. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
