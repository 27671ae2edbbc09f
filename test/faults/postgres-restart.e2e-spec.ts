import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import { migrate } from '../../src/database/migrate.js';
import { eventually, withClient } from '../support/database.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { postBytes } from '../support/mcp-client.js';
import { type ServerProcess, startServer } from '../support/server-process.js';

/** A request is a hang when it is not answered within this (spec: fail fast, ≤ 5 s). */
const HANG_MS = 5_000;

interface Shot {
  sentAt: number;
  ms: number;
  kind: 'ok' | 'rpc_error' | 'hang' | 'broken';
  status?: number;
  code?: number;
  detail?: string;
}

function listArticles(agent: Agent, server: ServerProcess, token: string, id: number): Promise<Shot> {
  const sentAt = Date.now();
  const payload = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_articles', arguments: {} } });
  const shot = (s: Omit<Shot, 'sentAt' | 'ms'>): Shot => ({ sentAt, ms: Date.now() - sentAt, ...s });
  return postBytes(server, payload, { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, { agent, timeoutMs: HANG_MS }).then(
    ({ status, text, body }) => {
      if (body === undefined) return shot({ kind: 'broken', status, detail: text.slice(0, 200) });
      if (status === 200 && body.result && !body.result.isError) return shot({ kind: 'ok', status: 200 });
      // The documented answer while the database is away: a JSON-RPC error with the request's id, or a tool error.
      if (body.jsonrpc === '2.0' && body.id === id && (typeof body.error?.code === 'number' || body.result?.isError)) {
        return shot({ kind: 'rpc_error', status, code: body.error?.code, detail: body.error?.message ?? body.result.content[0].text });
      }
      return shot({ kind: 'broken', status, detail: text.slice(0, 200) });
    },
    (err: NodeJS.ErrnoException) =>
      err.code === 'ETIMEDOUT'
        ? shot({ kind: 'hang', detail: `no answer within ${HANG_MS} ms` })
        : shot({ kind: 'broken', detail: `${err.code}: ${err.message}` }),
  );
}

describe('Postgres stopped and restarted under load', () => {
  let dir: string;
  let pg: EmbeddedPostgres;
  let port: number;
  let server: ServerProcess;
  let tenant: Tenant;
  const database = 'reblog_fault';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reblog-fault-pg-'));
    // Running as root, PostgreSQL runs as the postgres user, which must be able to enter the folder.
    chmodSync(dir, 0o755);
    pg = await EmbeddedPostgres.start({ dir: join(dir, 'pg'), database, settings: { fsync: 'off', synchronous_commit: 'off' } });
    port = Number(new URL(pg.url).port);
    await migrate(pg.url);
    server = await startServer({ DATABASE_URL: pg.url, RATE_LIMIT_PER_SECOND: '100000', ROLE: 'all' });
    tenant = await createTenant(server);
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await pg?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('answers every request fast with a JSON-RPC error while it is down, never crashes, and recovers by itself', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const shots: Shot[] = [];
    let stop = false;
    let id = 1;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const shot = await listArticles(agent, server, tenant.key, id++);
        shots.push(shot);
        if (shot.kind !== 'ok') await sleep(50);
      }
    });
    // Serving under load before the database goes away.
    await eventually(
      async () => shots.filter((s) => s.kind === 'ok').length,
      (n) => n >= 40,
      10_000,
      20,
    );
    const stoppedAt = Date.now();
    await pg.stop();
    await sleep(4_000);
    const restartedAt = Date.now();
    pg = await EmbeddedPostgres.start({ dir: join(dir, 'pg'), database, port, settings: { fsync: 'off', synchronous_commit: 'off' } });
    const readyAt = Date.now();
    // Recovery: the first success after the restart, then everything succeeds.
    let recoveredAt = 0;
    for (let waited = 0; !recoveredAt && waited < 20_000; waited += 50) {
      const ok = shots.find((s) => s.sentAt >= readyAt && s.kind === 'ok');
      if (ok) recoveredAt = ok.sentAt + ok.ms;
      else await sleep(50);
    }
    await sleep(2_000);
    stop = true;
    await Promise.all(loops);
    agent.destroy();

    // A crash is a failure to explain: show what the server printed before it ended.
    if (server.child.exitCode !== null) console.log(`The server exited (${server.child.exitCode}); its last output:\n${server.output().slice(-6000)}`);
    expect(server.child.exitCode).toBeNull();
    expect(shots.filter((s) => s.kind === 'hang' || s.kind === 'broken')).toEqual([]);
    const before = shots.filter((s) => s.sentAt + s.ms < stoppedAt);
    const during = shots.filter((s) => s.sentAt > stoppedAt + 500 && s.sentAt + s.ms < restartedAt);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((s) => s.kind === 'ok')).toBe(true);
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((s) => s.kind === 'rpc_error')).toBe(true);
    // A well-formed request that fails inside is -32603 with HTTP 200 (docs/protocol.md#errors-and-http-statuses), never a 5xx.
    expect(during.filter((s) => s.status !== 200)).toEqual([]);
    expect(recoveredAt).toBeGreaterThan(0);
    // Recovered within 10 s of the database being back, and stays recovered.
    expect(recoveredAt - readyAt).toBeLessThanOrEqual(10_000);
    expect(shots.filter((s) => s.sentAt > recoveredAt + 500).every((s) => s.kind === 'ok')).toBe(true);
    expect((await request(server.baseUrl).get('/readyz')).status).toBe(200);

    // Entries of requests answered while the database was away were held, and written once it was back.
    const answeredOk = shots.filter((s) => s.kind === 'ok').length;
    const logged = await eventually(
      () =>
        withClient(pg.url, async (c) =>
          Number(
            (
              await c.query(`SELECT coalesce(sum(count), 0) AS n FROM activity_log WHERE account_id = $1 AND tool = 'list_articles' AND outcome = 'ok'`, [
                tenant.accountId,
              ])
            ).rows[0].n,
          ),
        ),
      (n) => n === answeredOk,
      10_000,
      200,
    );
    expect(logged).toBe(answeredOk);

    const timings = {
      slowestDuringOutageMs: Math.max(...during.map((s) => s.ms)),
      recoveryAfterRestartMs: recoveredAt - readyAt,
      errors: [...new Set(during.map((s) => `${s.status} ${s.code ?? 'tool'} ${s.detail}`))],
    };
    process.stdout.write(`postgres-restart timings: ${JSON.stringify(timings)}\n`);
  }, 120_000);
});
