import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/database/migrate.js';
import { startServer, type ServerProcess } from './server-process.js';
import { startTestApp, type TestApp } from './test-app.js';

/** A migrated database of a test file's own, and what the file runs on it. */
export interface TestDatabase {
  url: string;
  /** A test app on this database, with `env` on top; closed by {@link drop}. */
  app(env?: Record<string, string>, extraModules?: Parameters<typeof startTestApp>[1]): Promise<TestApp>;
  /** A built server process on this database, with `env` on top; stopped by {@link drop}. */
  server(env?: Record<string, string>): Promise<ServerProcess>;
  /** Closes every app and server started on it (the last first), then drops it. */
  drop(): Promise<void>;
}

/**
 * A database of its own on the test run's Postgres, migrated. Every app of the test run runs a job
 * worker (ROLE=all) and listens for cache invalidations; a separate database keeps other test files'
 * workers from claiming these jobs with another configuration (and this file's from claiming
 * theirs), and lets several instances of one file share their state with nobody else.
 */
export async function createDatabase(): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL!;
  const name = `reblog_test_${randomBytes(5).toString('hex')}`;
  await withClient(base, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  const running: { close(): Promise<unknown> }[] = [];
  const track = <T extends { close(): Promise<unknown> }>(started: T): T => {
    running.unshift(started);
    return started;
  };
  return {
    url: url.toString(),
    app: async (env = {}, extraModules = []) => track(await startTestApp({ DATABASE_URL: url.toString(), ...env }, extraModules)),
    server: async (env = {}) => track(await startServer({ DATABASE_URL: url.toString(), ...env })),
    drop: async () => {
      for (const started of running.splice(0)) await started.close();
      await withClient(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * Instances of the app sharing a database of their own, one per `envs` (started in order), as
 * several replicas behind a gateway share one PostgreSQL; `db.drop()` closes them all.
 */
export async function startInstances(...envs: Record<string, string>[]): Promise<{ db: TestDatabase; apps: TestApp[] }> {
  const db = await createDatabase();
  const apps: TestApp[] = [];
  try {
    for (const env of envs) apps.push(await db.app(env));
  } catch (err) {
    await db.drop();
    throw err;
  }
  return { db, apps };
}

/** Runs `fn` on a connection of its own to `url`, closed after. */
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

/** A job row as Postgres holds it. */
export async function jobRow(url: string, id: string): Promise<any> {
  return withClient(url, async (c) => (await c.query('SELECT * FROM jobs WHERE id = $1', [id])).rows[0]);
}
