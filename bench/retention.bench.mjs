// Retention purge under load (bench/README.md#targets: /mcp p99 with the purge running ≤ 1.10 × without).
// One server (its own embedded PostgreSQL, the demo tenant) whose activity log is seeded with BENCH_ROWS
// entries, 90% of them older than ACTIVITY_RETENTION_DAYS (90). Then alternating rounds of
// `tools/call list_projects` at BENCH_CONNECTIONS connections: without the purge, and with the product's
// purge running (bench/servers/retention-on-signal.mjs starts and stops it on SIGUSR2). Each round's
// ratio is p99 with / p99 without; the verdict takes their median. Prints a table and writes
// bench/results/latest.json (key "retention").
//
//   BENCH_ROWS=10000000  BENCH_ROUNDS=5  BENCH_DURATION=10  BENCH_WARMUP=3  BENCH_CONNECTIONS=10
//   BENCH_SKIP_BUILD=true  reuse dist/
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ROOT, startServer } from '../scripts/lib/server.mjs';
import { build, median, runMain, saveResult } from './lib/bench.mjs';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TARGET = 1.1;
const CHUNK = 1_000_000;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

function databaseUrl(server) {
  const password = readFileSync(join(server.dataDir, 'postgres.password'), 'utf8').trim();
  const port = readFileSync(join(server.dataDir, 'postgres', 'postmaster.pid'), 'utf8')
    .split('\n')[3]
    .trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/reblog`;
}

/** `rows` entries of the demo account, one every few seconds back to 180 days ago: the oldest 90% are past retention. */
async function seed(url, rows) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const {
      rows: [demo],
    } = await client.query(`SELECT a.id AS account_id, c.id AS credential_id FROM accounts a JOIN credentials c ON c.account_id = a.id LIMIT 1`);
    const started = Date.now();
    for (let from = 1; from <= rows; from += CHUNK) {
      const to = Math.min(rows, from + CHUNK - 1);
      // Entry g is (g / rows) × 100 days older than 80 days ago: the oldest 90% lie beyond 90 days.
      await client.query(
        `INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, client_name, client_version, method, tool, outcome, duration_ms, count)
         SELECT (lpad(to_hex(floor(extract(epoch FROM s.ts) * 1000)::bigint), 12, '0') || '7' || substr(md5(s.g::text), 1, 3) || '8' || substr(md5(s.g::text), 4, 15))::uuid,
                s.ts, $1, 'api_key', $2, 'key', 'bench', '1.0', 'tools/call',
                CASE WHEN s.g % 3 = 0 THEN 'list_articles' WHEN s.g % 3 = 1 THEN 'get_article' ELSE 'list_projects' END,
                CASE WHEN s.g % 50 = 0 THEN 'tool_error' ELSE 'ok' END, 3, 1
           FROM (SELECT g, now() - interval '80 days' - make_interval(secs => g::double precision / $5 * 100 * 86400) AS ts FROM generate_series($3::int, $4::int) g) s`,
        [demo.account_id, demo.credential_id, from, to, rows],
      );
      process.stdout.write(`  ${to.toLocaleString('en')} rows (${Math.round((Date.now() - started) / 1000)} s)\n`);
    }
    await client.query('VACUUM ANALYZE activity_log');
    const {
      rows: [counts],
    } = await client.query(`SELECT count(*)::int AS total, count(*) FILTER (WHERE at < now() - interval '90 days')::int AS old FROM activity_log`);
    return counts;
  } finally {
    await client.end();
  }
}

async function removed(origin) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return Number(/^reblog_retention_rows_removed_total\{table="activity_log"\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

/** Waits until the purge has removed rows (it started) or stopped removing them (it stopped). */
async function until(origin, running) {
  let last = await removed(origin);
  for (let i = 0; i < 200; i++) {
    await sleep(250);
    const now = await removed(origin);
    if (running ? now > last : now === last) return now;
    last = now;
  }
  throw new Error(`The purge did not ${running ? 'start' : 'stop'}.`);
}

const request = (server) => ({
  url: server.url,
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${server.key}`,
    'mcp-protocol-version': '2025-11-25',
  },
  body: CALL,
  connections: CONNECTIONS,
});

async function load(server) {
  const r = await autocannon({ ...request(server), duration: DURATION });
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts — the figures would be meaningless.`);
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99 };
}

async function main() {
  await build();
  console.log(
    `Retention bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${ROWS.toLocaleString('en')} activity rows, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION} s × 2.\n`,
  );
  const server = await startServer({ env: { ADMIN_TOKEN }, nodeArgs: ['--import', join(ROOT, 'bench/servers/retention-on-signal.mjs')] });
  try {
    console.log('Seeding...');
    const counts = await seed(databaseUrl(server), ROWS);
    console.log(`${counts.total.toLocaleString('en')} entries, ${counts.old.toLocaleString('en')} past retention.\n`);
    if (WARMUP > 0) await autocannon({ ...request(server), duration: WARMUP });

    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const off = await load(server);
      process.kill(server.pid, 'SIGUSR2');
      const before = await until(server.origin, true);
      const on = await load(server);
      const during = (await removed(server.origin)) - before;
      process.kill(server.pid, 'SIGUSR2');
      await until(server.origin, false);
      rounds.push({ off, on, removedDuring: during, ratio: on.p99 / off.p99 });
      console.log(
        `round ${i + 1}/${ROUNDS}: without purge ${off.rps} req/s p99 ${off.p99} ms; with purge ${on.rps} req/s p99 ${on.p99} ms ` +
          `(${during.toLocaleString('en')} rows removed, ${Math.round(during / DURATION).toLocaleString('en')}/s); ratio ${(on.p99 / off.p99).toFixed(3)}`,
      );
      if (during === 0) throw new Error('The purge removed nothing during a round: seed more rows (BENCH_ROWS).');
    }
    const ratio = median(rounds.map((r) => r.ratio));
    const met = ratio <= TARGET;
    console.log(
      `\nmedian p99 without ${median(rounds.map((r) => r.off.p99))} ms, with ${median(rounds.map((r) => r.on.p99))} ms; median ratio ${ratio.toFixed(3)}`,
    );
    console.log(`${met ? 'MET   ' : 'MISSED'}  /mcp p99 with the purge / without ≤ ${TARGET}: ${ratio.toFixed(3)}`);

    saveResult('retention', {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadAverage: loadavg(),
      rows: ROWS,
      ...counts,
      connections: CONNECTIONS,
      duration: DURATION,
      rounds,
      ratio,
      met,
    });
    return met;
  } finally {
    await server.stop();
  }
}

runMain(main);
