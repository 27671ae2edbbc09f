import pg from 'pg';
import { run, sql } from './sql.js';

const PING = sql('database.ping', 'SELECT 1');

/** The database could not be reached; `timedOut` when it did not answer in time (rather than refusing or failing). */
export class DatabaseUnreachableError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

/** Connects once; turns the driver's error into a sentence that names the database and the cause. */
export async function checkDatabase(url: string, timeoutMs = 5_000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
    await run(client, PING, []);
  } catch (err) {
    const where = new URL(url);
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new DatabaseUnreachableError(
      `Cannot reach the database at ${where.hostname}:${where.port || 5432}${where.pathname} (${reason}). Check DATABASE_URL and that PostgreSQL is running.`,
      reason === 'timeout expired' || reason === 'ETIMEDOUT',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
