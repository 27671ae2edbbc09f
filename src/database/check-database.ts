import pg from 'pg';
import { run, sql } from './sql.js';

const PING = sql('database.ping', 'SELECT 1');

/** Connects once; turns the driver's error into a sentence that names the database and the cause. */
export async function checkDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await run(client, PING, []);
  } catch (err) {
    const where = new URL(url);
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new Error(`Cannot reach the database at ${where.hostname}:${where.port || 5432}${where.pathname} (${reason}). Check DATABASE_URL and that PostgreSQL is running.`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
