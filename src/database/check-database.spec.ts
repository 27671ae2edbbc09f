import { createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../common/net.js';
import { checkDatabase, DatabaseUnreachableError } from './check-database.js';

/** The start asks again after loading only when the database timed out; a refusal ends it at once. */
describe('checkDatabase', () => {
  let silent: Server;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a database too busy (or a process too busy to read it).
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((closed) => silent.close(closed));
  });

  it('a database that does not answer in time is unreachable and timed out', async () => {
    const { port } = silent.address() as { port: number };
    const err = await checkDatabase(`postgres://u:p@127.0.0.1:${port}/db`, 200).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect(err).toMatchObject({
      timedOut: true,
      message: `Cannot reach the database at 127.0.0.1:${port}/db (timeout expired). Check DATABASE_URL and that PostgreSQL is running.`,
    });
  });

  it('a refused connection is unreachable, not timed out', async () => {
    const port = await freePort(); // nothing listens there
    const err = await checkDatabase(`postgres://u:p@127.0.0.1:${port}/db`, 2_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect(err).toMatchObject({ timedOut: false, message: expect.stringContaining('(ECONNREFUSED)') });
  });

  it("the test run's database is reachable", async () => {
    await expect(checkDatabase(process.env.DATABASE_URL!)).resolves.toBeUndefined();
  });
});
