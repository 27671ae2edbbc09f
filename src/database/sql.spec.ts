import pg from 'pg';
import { DataSource } from 'typeorm';
import { affected, row, rows, run, sql, transaction } from './sql.js';

/** The one way statements run, on the test run's real PostgreSQL, through each kind of Queryable. */
describe('sql.ts', () => {
  let db: DataSource;
  let pool: pg.Pool;
  const table = `sql_spec_${process.pid}`;
  const insert = sql<[id: number, name: string]>('sql_spec.insert', `INSERT INTO ${table} (id, name) VALUES ($1, $2)`);
  const rename = sql<[name: string], { id: number }>('sql_spec.rename', `UPDATE ${table} SET name = $1 RETURNING id`);
  const byId = sql<[id: number], { name: string }>('sql_spec.by_id', `SELECT name FROM ${table} WHERE id = $1`, { prepared: true });
  const prepared = sql<[], { name: string }>('sql_spec.prepared_names', `SELECT name FROM pg_prepared_statements`);

  beforeAll(async () => {
    db = await new DataSource({ type: 'postgres', url: process.env.DATABASE_URL }).initialize();
    pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
    await run(db, sql('sql_spec.create', `CREATE TABLE ${table} (id int PRIMARY KEY, name text NOT NULL)`), []);
  });
  afterAll(async () => {
    await run(db, sql('sql_spec.drop', `DROP TABLE IF EXISTS ${table}`), []);
    await pool.end();
    await db.destroy();
  });

  it('answers rows and the affected count alike on the DataSource, a transaction and a pg pool (TypeORM answers an UPDATE as [rows, count])', async () => {
    await expect(affected(db, insert, [1, 'a'])).resolves.toBe(1);
    await expect(affected(pool, insert, [2, 'b'])).resolves.toBe(1);
    await expect(run(db, rename, ['x'])).resolves.toEqual({ rows: expect.arrayContaining([{ id: 1 }, { id: 2 }]), count: 2 });
    await expect(db.transaction((m) => run(m, rename, ['y']))).resolves.toMatchObject({ count: 2 });
    await expect(run(pool, rename, ['z'])).resolves.toMatchObject({ count: 2 });
    await expect(rows(db, byId, [1])).resolves.toEqual([{ name: 'z' }]);
    await expect(row(pool, byId, [3])).resolves.toBeNull();
  });

  it('prepares a statement by name on a pg connection TypeORM lends through a query runner', async () => {
    const runner = db.createQueryRunner();
    try {
      const client = (await runner.connect()) as pg.PoolClient;
      await expect(row(client, byId, [1])).resolves.toEqual({ name: 'z' });
      await expect(rows(client, prepared, [])).resolves.toContainEqual({ name: 'sql_spec.by_id' });
    } finally {
      await runner.release();
    }
  });

  it('prepares a statement by name on the DataSource and in a transaction too, with the same rows and counts as unprepared', async () => {
    const renamePrepared = sql<[name: string], { id: number }>('sql_spec.rename_prepared', `UPDATE ${table} SET name = $1 RETURNING id`, { prepared: true });
    await expect(run(db, renamePrepared, ['p'])).resolves.toEqual({ rows: expect.arrayContaining([{ id: 1 }, { id: 2 }]), count: 2 });
    const seen = await db.transaction(async (m) => {
      await expect(run(m, renamePrepared, ['q'])).resolves.toMatchObject({ count: 2 });
      await expect(row(m, byId, [1])).resolves.toEqual({ name: 'q' });
      // pg_prepared_statements lists this connection's own statements: the transaction's.
      return (await rows(m, prepared, [])).map((r) => r.name);
    });
    expect(seen).toEqual(expect.arrayContaining(['sql_spec.rename_prepared', 'sql_spec.by_id']));
    // On the DataSource it goes to TypeORM's pg pool itself, with no query runner made for it.
    const runners = jest.spyOn(db, 'createQueryRunner');
    try {
      await expect(row(db, byId, [2])).resolves.toEqual({ name: 'q' });
      expect(runners).not.toHaveBeenCalled();
    } finally {
      runners.mockRestore();
    }
    // Rolled back with the transaction like any statement.
    await expect(db.transaction((m) => run(m, renamePrepared, ['r']).then(() => Promise.reject(new Error('undo'))))).rejects.toThrow('undo');
    await expect(row(db, byId, [1])).resolves.toEqual({ name: 'q' });
  });

  it('transaction() on a pg pool commits what resolves and rolls back what throws', async () => {
    await transaction(pool, (client) => affected(client, insert, [10, 'kept']));
    await expect(
      transaction(pool, async (client) => {
        await affected(client, insert, [11, 'gone']);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await expect(row(db, byId, [10])).resolves.toEqual({ name: 'kept' });
    await expect(row(db, byId, [11])).resolves.toBeNull();
  });

  describe('transaction() when PostgreSQL ends its connection', () => {
    const backend = sql<[], { pid: number }>('sql_spec.backend', 'SELECT pg_backend_pid() AS pid');
    const terminate = sql<[pid: number]>('sql_spec.terminate', 'SELECT pg_terminate_backend($1)');
    const sleep = sql('sql_spec.sleep', 'SELECT pg_sleep(5)');

    /** Ends the backend of `client` from another connection, as a PostgreSQL shutting down does. */
    async function endBackendOf(client: pg.PoolClient): Promise<void> {
      const { pid } = (await row(client, backend, []))!;
      await run(db, terminate, [pid]);
    }

    it('between two statements: the next one fails, nothing is committed, and the connection is closed rather than lent again', async () => {
      const closed = jest.fn();
      await expect(
        transaction(pool, async (client) => {
          client.once('end', closed);
          await affected(client, insert, [20, 'lost']);
          const ended = new Promise((done) => client.once('end', done));
          await endBackendOf(client);
          await ended;
          return affected(client, insert, [21, 'lost']);
        }),
      ).rejects.toThrow(/not queryable|terminat/);
      expect(closed).toHaveBeenCalled();
      await expect(row(db, byId, [20])).resolves.toBeNull();
      // The pool carries on with a new connection.
      await transaction(pool, (client) => affected(client, insert, [22, 'kept']));
      await expect(row(db, byId, [22])).resolves.toEqual({ name: 'kept' });
    });

    it("during a statement: it fails with PostgreSQL's reason", async () => {
      await expect(
        transaction(pool, async (client) => {
          const { pid } = (await row(client, backend, []))!;
          const waiting = run(client, sleep, []);
          await run(db, terminate, [pid]);
          return waiting;
        }),
      ).rejects.toThrow(/terminating connection due to administrator command/);
      await expect(transaction(pool, (client) => rows(client, backend, []))).resolves.toHaveLength(1);
    });
  });
});
