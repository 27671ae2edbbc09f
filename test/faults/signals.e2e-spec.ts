import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase, eventually, withClient, type TestDatabase } from '../support/database.js';
import { configuredTenant } from '../support/fixtures.js';
import { postBytes } from '../support/mcp-client.js';
import type { ServerProcess } from '../support/server-process.js';

interface Outcome {
  kind: 'ok' | 'draining' | 'refused' | 'failed';
  status?: number;
  detail?: string;
  sentAt: number;
}

/** One POST /mcp over a keep-alive agent, as a gateway would send it; classifies the outcome. */
function post(agent: Agent, server: ServerProcess, token: string, body: object): Promise<Outcome> {
  const sentAt = Date.now();
  return postBytes(server, JSON.stringify(body), { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, { agent }).then(
    ({ status, headers, text, body: json }): Outcome => {
      if (json === undefined) return { kind: 'failed', status, detail: `not JSON: ${text.slice(0, 200)}`, sentAt };
      if (status === 200 && json.result !== undefined && !json.result.isError) return { kind: 'ok', status: 200, sentAt };
      if (status === 503 && json.error?.code === -32000 && /shutting down/.test(json.error.message) && headers.connection === 'close')
        return { kind: 'draining', status: 503, sentAt };
      return { kind: 'failed', status, detail: text.slice(0, 300), sentAt };
    },
    // A connection that could not be opened (refused, or reset in the accept queue of a listener that
    // closed) never delivered the request: the gateway sends it elsewhere. Anything else lost a request.
    (err: NodeJS.ErrnoException): Outcome => ({
      kind: err.syscall === 'connect' ? 'refused' : 'failed',
      detail: `${err.code} (${err.syscall}): ${err.message}`,
      sentAt,
    }),
  );
}

/**
 * `clients` loops calling list_projects back to back over `agent`, each ending at its first answer
 * that is not a success, or when `stopped()` says so. Every outcome is pushed to `outcomes`.
 */
function flood(agent: Agent, server: ServerProcess, token: string, clients: number, outcomes: Outcome[], stopped = () => false): Promise<void[]> {
  let id = 1;
  const loop = async () => {
    while (!stopped()) {
      const o = await post(agent, server, token, { jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });
      outcomes.push(o);
      if (o.kind !== 'ok') return;
    }
  };
  return Promise.all(Array.from({ length: clients }, loop));
}

describe('SIGTERM under load', () => {
  let db: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    db = await createDatabase();
    server = await db.server({
      RATE_LIMIT_PER_SECOND: '100000',
      SHUTDOWN_GRACE_MS: '700',
      // write_article takes ~2 s here and is answered synchronously: a request in flight through the whole drain.
      LOCAL_PROVIDER_DELAY_MS: '2000',
      SYNC_BUDGET_MS: '60000',
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.drop();
  });

  it('goes unready, serves through the grace, refuses new requests with 503, finishes those in flight, flushes the log and exits 0', async () => {
    const tenant = await configuredTenant(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    let stop = false;
    const outcomes: Outcome[] = [];
    const loops = flood(agent, server, tenant.key, 16, outcomes, () => stop);
    // The flood is under way: its answers are coming.
    await eventually(
      async () => outcomes.length,
      (n) => n >= 160,
      10_000,
      20,
    );

    // Long calls in flight when the signal arrives.
    const slow = Array.from({ length: 3 }, (_, i) =>
      post(agent, server, tenant.key, {
        jsonrpc: '2.0',
        id: `slow-${i}`,
        method: 'tools/call',
        params: { name: 'write_article', arguments: { brief: `Slow ${i}` } },
      }),
    );
    // In flight: the server has taken all three up (their jobs exist).
    await eventually(
      () => withClient(db.url, async (c) => Number((await c.query(`SELECT count(*) AS n FROM jobs WHERE account_id = $1`, [tenant.accountId])).rows[0].n)),
      (n) => n === 3,
      10_000,
      20,
    );
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');

    // Readiness goes false at once, while requests are still served during the grace.
    let unreadyAt = 0;
    for (let i = 0; i < 50 && !unreadyAt; i++) {
      const ready = await fetch(`http://127.0.0.1:${server.port}/readyz`);
      if (ready.status === 503) unreadyAt = Date.now();
      else await sleep(20);
    }
    expect(unreadyAt).toBeGreaterThan(0);

    const [{ code, signal }, slowOutcomes] = await Promise.all([server.exited, Promise.all(slow)]);
    stop = true;
    await loops;
    agent.destroy();

    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(slowOutcomes.map((o) => o.kind)).toEqual(['ok', 'ok', 'ok']);
    const failed = outcomes.filter((o) => o.kind === 'failed');
    expect(failed).toEqual([]);
    // Served during the grace after readiness went false, then refused.
    expect(outcomes.some((o) => o.kind === 'ok' && o.sentAt > unreadyAt)).toBe(true);
    expect(outcomes.filter((o) => o.kind === 'draining' || o.kind === 'refused').length).toBeGreaterThan(0);
    for (const o of outcomes.filter((x) => x.kind !== 'ok')) expect(o.sentAt).toBeGreaterThanOrEqual(signalledAt);
    expect(server.output()).toMatch(/Draining: readiness is false/);

    // Every answered request is in the log: the log was flushed before the exit.
    const answered = outcomes.filter((o) => o.kind === 'ok').length + slowOutcomes.length;
    const logged = await withClient(db.url, async (c) =>
      Number(
        (
          await c.query(`SELECT coalesce(sum(count), 0) AS n FROM activity_log WHERE account_id = $1 AND tool IN ('list_projects', 'write_article')`, [
            tenant.accountId,
          ])
        ).rows[0].n,
      ),
    );
    expect(logged).toBe(answered);
    // The long calls were answered (with their job id when the drain cut their wait short), and their
    // jobs either finished or were handed back to the queue for another worker: none is left running.
    const jobs = await withClient(db.url, async (c) => (await c.query(`SELECT status, attempts FROM jobs WHERE account_id = $1`, [tenant.accountId])).rows);
    expect(jobs).toHaveLength(3);
    for (const job of jobs) expect(['succeeded', 'queued']).toContain(job.status);
  }, 120_000);
});

describe('SIGKILL under load', () => {
  let db: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    db = await createDatabase();
    server = await db.server({ RATE_LIMIT_PER_SECOND: '100000' });
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.drop();
  });

  it('loses no activity entry of an answered request: only requests left unanswered may be missing', async () => {
    const tenant = await configuredTenant(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const outcomes: Outcome[] = [];
    const loops = flood(agent, server, tenant.key, 32, outcomes);
    // Mid-flood: batches are being written and answers are waiting for them.
    await eventually(
      async () => outcomes.filter((o) => o.kind === 'ok').length,
      (n) => n >= 300,
      10_000,
      20,
    );
    server.child.kill('SIGKILL');
    await expect(server.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
    await loops;
    agent.destroy();

    const answered = outcomes.filter((o) => o.kind === 'ok').length;
    const unanswered = outcomes.length - answered;
    expect(answered).toBeGreaterThan(100);
    expect(unanswered).toBeGreaterThan(0);
    const logged = await withClient(db.url, async (c) =>
      Number(
        (await c.query(`SELECT coalesce(sum(count), 0) AS n FROM activity_log WHERE account_id = $1 AND tool = 'list_projects'`, [tenant.accountId])).rows[0].n,
      ),
    );
    expect(logged).toBeGreaterThanOrEqual(answered);
    expect(logged).toBeLessThanOrEqual(answered + unanswered);
  }, 120_000);
});
