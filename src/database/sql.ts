import { SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { tracer, tracingOn } from '../common/telemetry.js';

/**
 * One SQL statement of a repository: its text, with the types of the parameters it takes (`P`) and
 * of the rows it answers (`R`). Only repositories (`*.repository.ts`) declare the statements of
 * tables, besides the database plumbing's own (LISTEN, start-up checks, the migration lock); services
 * call the repositories' methods and hold the transaction scope.
 */
export interface Sql<P extends readonly unknown[], R> {
  /** `<aggregate>.<statement>`, e.g. `articles.find_by_id`: the snapshot file and the prepared statement's name. */
  readonly name: string;
  readonly text: string;
  /** Prepared once per connection under its name, wherever it runs (see runStatement). */
  readonly prepared: boolean;
  /** Carries the types only; never set. */
  readonly types?: (params: P) => R;
}

/**
 * Where a statement runs: TypeORM's pool (the DataSource), a transaction (its EntityManager), a
 * pg pool (or one of its clients) that a repository opened for itself, or a lone pg connection
 * (the LISTEN connection, the start-up checks).
 */
export type Queryable = DataSource | EntityManager | pg.Pool | pg.PoolClient | pg.Client;

export interface SqlOptions {
  /**
   * A statement on a hot path: its text is kept in `src/queries/<aggregate>.sql` for review, and a
   * test fails when the two differ (`UPDATE_QUERY_SNAPSHOTS=1 npx jest src/database/hot-statements` rewrites them).
   */
  hot?: boolean;
  /**
   * Name it for the server to parse and plan once per connection. For statements whose best plan does not
   * depend on the values (after five runs PostgreSQL may keep one generic plan for all of them) and that
   * name their columns: a prepared `SELECT *` fails ("cached plan must not change result type") once
   * another instance's migration adds a column to its table.
   */
  prepared?: boolean;
}

const hotStatements = new Map<string, string>();

/** Declares a statement. `P` types its `$1…$n`, `R` the rows it answers. */
export function sql<P extends readonly unknown[] = [], R = never>(name: string, text: string, options: SqlOptions = {}): Sql<P, R> {
  if (options.hot) {
    const known = hotStatements.get(name);
    if (known !== undefined && known !== text) throw new Error(`Two hot statements are named "${name}".`);
    hotStatements.set(name, text);
  }
  return { name, text, prepared: options.prepared ?? false };
}

/** The hot statements declared so far (by the repositories imported), by name. */
export function declaredHotStatements(): ReadonlyMap<string, string> {
  return hotStatements;
}

export interface SqlResult<R> {
  rows: R[];
  /** Rows the statement affected (UPDATE, DELETE, INSERT) or answered. */
  count: number;
}

/**
 * Runs a statement and answers its rows and affected count, whatever it runs on. While tracing is on, a
 * statement run for a traced request or job is a CLIENT span of it, named by the statement's name (never
 * its values); statements outside one (polling, housekeeping) make no span. The span is not made active:
 * nothing runs inside a statement, so entering a context for it would only cost.
 */
export function run<P extends readonly unknown[], R>(db: Queryable, statement: Sql<P, R>, params: P): Promise<SqlResult<R>> {
  if (!tracingOn() || !trace.getActiveSpan()) return runStatement(db, statement, params);
  const span = tracer.startSpan(statement.name, { kind: SpanKind.CLIENT, attributes: spanAttributes(statement) });
  return runStatement(db, statement, params).then(
    (result) => {
      span.setAttribute('db.response.returned_rows', result.rows.length);
      span.end();
      return result;
    },
    (err: unknown) => {
      // The SQLSTATE only: PostgreSQL's message may quote the values.
      const code = (err as { code?: unknown }).code;
      span.setAttribute('error.type', typeof code === 'string' ? code : '_OTHER');
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw err;
    },
  );
}

/** The attributes a statement's span starts with: the same for every run, so made once per statement (the SDK copies them). */
const startAttributes = new WeakMap<{ readonly name: string; readonly text: string }, Attributes>();

function spanAttributes(statement: { readonly name: string; readonly text: string }): Attributes {
  let attributes = startAttributes.get(statement);
  if (!attributes) {
    const operation = /^\s*(\w+)/.exec(statement.text)?.[1]?.toUpperCase();
    attributes = Object.freeze({ 'db.system.name': 'postgresql', 'db.query.summary': statement.name, 'db.operation.name': operation });
    startAttributes.set(statement, attributes);
  }
  return attributes;
}

async function runStatement<P extends readonly unknown[], R>(db: Queryable, statement: Sql<P, R>, params: P): Promise<SqlResult<R>> {
  const values = params as unknown as unknown[];
  if (db instanceof pg.Pool || db instanceof pg.Client) return onPg(db, statement, values);
  // A prepared statement on the DataSource goes to TypeORM's pg pool itself: no query runner made for one statement.
  if (statement.prepared && db instanceof DataSource) return onPg(pgPoolOf(db), statement, values);
  // TypeORM: on the transaction's query runner, or one lent for this statement (as its own query() does),
  // asking for the structured result, which has the affected count of every kind of statement. A prepared
  // statement in a transaction goes to its pg connection under its name (TypeORM's query() cannot name one).
  const own = db instanceof DataSource ? undefined : db.queryRunner;
  const runner = own ?? (db instanceof DataSource ? db : db.connection).createQueryRunner();
  try {
    if (statement.prepared) return await onPg((await runner.connect()) as pg.PoolClient, statement, values);
    const result = await runner.query(statement.text, values, true);
    const rows = (result.records ?? []) as R[];
    return { rows, count: result.affected ?? rows.length };
  } finally {
    if (!own) await runner.release();
  }
}

/** A statement on pg itself, by name when it is prepared. */
async function onPg<R>(db: pg.Pool | pg.Client, statement: Pick<Sql<never, R>, 'name' | 'text' | 'prepared'>, values: unknown[]): Promise<SqlResult<R>> {
  const result = await (db as pg.Pool).query<R & pg.QueryResultRow>(
    statement.prepared ? { name: statement.name, text: statement.text, values } : { text: statement.text, values },
  );
  return { rows: result.rows, count: result.rowCount ?? result.rows.length };
}

/** The pg pool under TypeORM's DataSource (its Postgres driver's `master`). */
function pgPoolOf(db: DataSource): pg.Pool {
  return (db.driver as PostgresDriver).master as pg.Pool;
}

/** The rows a statement answers. */
export async function rows<P extends readonly unknown[], R>(db: Queryable, statement: Sql<P, R>, params: P): Promise<R[]> {
  return (await run(db, statement, params)).rows;
}

/** The first row a statement answers, or null. */
export async function row<P extends readonly unknown[], R>(db: Queryable, statement: Sql<P, R>, params: P): Promise<R | null> {
  return (await run(db, statement, params)).rows[0] ?? null;
}

/** How many rows a statement affected. */
export async function affected<P extends readonly unknown[], R>(db: Queryable, statement: Sql<P, R>, params: P): Promise<number> {
  return (await run(db, statement, params)).count;
}

const BEGIN = sql('transaction.begin', 'BEGIN');
const COMMIT = sql('transaction.commit', 'COMMIT');
const ROLLBACK = sql('transaction.rollback', 'ROLLBACK');

/**
 * Runs `work` in a transaction on one connection of a repository's own pg pool (TypeORM's
 * `DataSource.transaction` is for its pool): committed when `work` resolves, rolled back when it throws.
 * A connection that PostgreSQL drops meanwhile fails the statement under way (or the next one) and is
 * closed, not handed back to the pool.
 */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // While a connection is lent, the pool no longer listens for its errors: without this listener, PostgreSQL
  // shutting down or ending the backend would be an unhandled 'error' event, which ends the process.
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  try {
    await run(client, BEGIN, []);
    const result = await work(client);
    await run(client, COMMIT, []);
    return result;
  } catch (err) {
    await run(client, ROLLBACK, []).catch((rollbackFailed: Error) => (broken ??= rollbackFailed));
    throw err;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
