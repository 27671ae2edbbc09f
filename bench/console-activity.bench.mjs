// The owners' console's Activity page at scale (docs/console.md#activity: under 100 ms of server
// time at 1,000,000 log rows for the account). Loads BENCH_ROWS entries for one account (30 days of
// traffic, generate_series, one INSERT) plus a tenth as many in other accounts, on an embedded
// PostgreSQL of its own, migrated; then times each statement the console runs — the listing's
// first page with each filter, a member's page, the chart — exactly as ActivityReportsRepository builds
// them (listQuery / chartQuery from dist/), on one pg connection. Rounds are interleaved; each
// query's time is divided by the unfiltered first page's in the same round (the baseline), and the
// table shows medians: the ratio, the absolute ms (round trip on loopback: the statement's server
// time plus a few µs), and the executor's own time from one EXPLAIN (ANALYZE). Nothing is asserted.
// Prints a table and writes bench/results/latest.json (key "consoleActivity").
//
//   BENCH_ROWS=1000000  BENCH_ROUNDS=15  BENCH_SKIP_BUILD=true (reuse dist/)
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { ROOT } from '../scripts/lib/server.mjs';
import { build, median, runMain, saveResult, startDatabase, atCleanup, table } from './lib/bench.mjs';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 15));
const DAYS = 30;

/** The account's rows spread over the last 30 days, newest now: 20 credentials (credential 0 has 0.2% of the rows), 6 client names. */
async function seed(client, accountId) {
  const others = Math.floor(ROWS / 10);
  const started = performance.now();
  await client.query(
    `INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, client_name, client_version, session_id, method, tool, project_id, outcome, error, duration_ms, count)
     SELECT (lpad(to_hex((extract(epoch FROM s.ts) * 1000)::bigint), 12, '0') || '7' || substr(md5(s.g::text), 1, 3) || '8' || substr(md5(s.g::text), 4, 15))::uuid,
            s.ts, CASE WHEN s.g <= $2 THEN $1::uuid ELSE md5('acct' || (s.g % 20))::uuid END, 'grant',
            md5('cred' || CASE WHEN s.c < 0.002 THEN 0 ELSE 1 + (s.g % 19) END)::uuid, 'grant',
            CASE WHEN s.r < 0.005 THEN NULL WHEN s.r3 < 0.005 THEN 'rare-agent' WHEN s.r3 < 0.6 THEN 'claude-code' WHEN s.r3 < 0.8 THEN 'cursor' WHEN s.r3 < 0.95 THEN 'vscode' ELSE 'inspector' END,
            '1.0', NULL,
            CASE WHEN s.r < 0.02 THEN 'initialize' WHEN s.r < 0.1 THEN 'tools/list' ELSE 'tools/call' END,
            CASE WHEN s.r < 0.1 THEN NULL WHEN s.r < 0.5 THEN 'list_articles' WHEN s.r < 0.8 THEN 'get_article' WHEN s.r < 0.999 THEN 'list_projects' ELSE 'delete_article' END,
            NULL,
            CASE WHEN s.r2 < 0.97 THEN 'ok' WHEN s.r2 < 0.985 THEN 'invalid' WHEN s.r2 < 0.995 THEN 'tool_error' WHEN s.r2 < 0.9995 THEN 'rate_limited' ELSE 'denied' END,
            NULL, 3, 1
       FROM (SELECT g, now() - make_interval(secs => (g % $2) * ($4::float8 * 86400 / $2)) AS ts, random() AS r, random() AS r2, random() AS r3, random() AS c
               FROM generate_series(1, $3::int) g) s`,
    [accountId, ROWS, ROWS + others, DAYS],
  );
  console.log(`  inserted ${(ROWS + others).toLocaleString('en')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await client.query('VACUUM ANALYZE activity_log');
  console.log(`  vacuumed and analysed after ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function timed(client, { statement, params }) {
  const t0 = performance.now();
  const result = await client.query({ text: statement.text, values: params });
  return { ms: performance.now() - t0, rows: result.rowCount };
}

async function explain(client, { statement, params }) {
  const { rows } = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, values: params });
  const plan = rows[0]['QUERY PLAN'][0];
  const nodes = [];
  const walk = (n) => (nodes.push(n['Index Name'] ? `${n['Node Type']} ${n['Index Name']}` : n['Node Type']), (n.Plans ?? []).forEach(walk));
  walk(plan.Plan);
  return { executionMs: plan['Execution Time'], planningMs: plan['Planning Time'], nodes: [...new Set(nodes)].join(' > ') };
}

async function main() {
  await build();
  const { listQuery, chartQuery } = await import(join(ROOT, 'dist/src/activity/activity-reports.repository.js'));
  console.log(
    `Console activity bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${ROWS.toLocaleString('en')} rows in one account over ${DAYS} days, ${ROUNDS} rounds.\n`,
  );
  const database = await startDatabase('console-activity');
  atCleanup(database.stop);
  const client = new pg.Client({ connectionString: database.db.url });
  await client.connect();
  atCleanup(() => client.end());
  const accountId = randomUUID();
  await seed(client, accountId);

  const cred = (i) => client.query(`SELECT md5('cred' || $1::text)::uuid AS id`, [String(i)]).then((r) => r.rows[0].id);
  const [big, other, small] = [await cred(1), await cred(2), await cred(0)];
  const {
    rows: [mid],
  } = await client.query(`SELECT id FROM activity_log WHERE account_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1`, [accountId, Math.floor(ROWS * 0.5)]);
  const now = Date.now();
  const day = 86_400_000;
  const hourFloor = Math.floor(now / 3_600_000) * 3_600_000;
  const dayFloor = Math.floor(now / day) * day;
  const list = (conditions) => listQuery(accountId, conditions, 51);
  const member = [big, small];
  const queries = [
    ['page 1, no filter (baseline)', list({})],
    ['page deep in the log (cursor at 50%)', list({ after: mid.id })],
    ['outcome=denied (0.05%)', list({ outcome: 'denied' })],
    ['outcome=ok (97%)', list({ outcome: 'ok' })],
    ['tool=delete_article (0.1%)', list({ tool: 'delete_article' })],
    ['tool=nothing (no match)', list({ tool: 'nothing' })],
    ['credential (1 of 19)', list({ credentialId: big })],
    ['credential (0.2%)', list({ credentialId: small })],
    ['client_name=claude-code', list({ clientName: 'claude-code' })],
    ['client_name=rare-agent (0.5%)', list({ clientName: 'rare-agent' })],
    ['method=initialize', list({ method: 'initialize' })],
    ['time range: 1 h, 15 days ago', list({ from: new Date(now - 15 * day), to: new Date(now - 15 * day + 3_600_000) })],
    ['time range: from 29 days ago', list({ from: new Date(now - 29 * day) })],
    ['time range: to 20 days ago', list({ to: new Date(now - 20 * day) })],
    ['client + outcome + 1 day range', list({ clientName: 'cursor', outcome: 'invalid', from: new Date(now - 10 * day), to: new Date(now - 9 * day) })],
    ['tool + outcome (rare pair)', list({ tool: 'delete_article', outcome: 'denied' })],
    ['member (2 grants), page 1', list({ credentialIds: member })],
    ['member, deep page', list({ credentialIds: member, after: mid.id })],
    ['member + outcome=denied', list({ credentialIds: member, outcome: 'denied' })],
    ['member + 1 h range, 15 days ago', list({ credentialIds: member, from: new Date(now - 15 * day), to: new Date(now - 15 * day + 3_600_000) })],
    ['member of another account (no rows)', listQuery(randomUUID(), { credentialIds: [other] }, 51)],
    ['chart: 24 h by hour', chartQuery(accountId, new Date(hourFloor - 23 * 3_600_000), new Date(now + 1), 'hour')],
    ['chart: 7 days by day', chartQuery(accountId, new Date(dayFloor - 6 * day), new Date(now + 1), 'day')],
    ['chart: 7 days by hour', chartQuery(accountId, new Date(hourFloor - 167 * 3_600_000), new Date(now + 1), 'hour')],
    ['chart: 24 h, member', chartQuery(accountId, new Date(hourFloor - 23 * 3_600_000), new Date(now + 1), 'hour', member)],
  ];

  // Warm: the first read of each index after seeding reads cold pages.
  for (const [, q] of queries) for (let i = 0; i < 3; i++) await timed(client, q);
  const samples = queries.map(() => []);
  const ratios = queries.map(() => []);
  const counts = queries.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    const base = await timed(client, queries[0][1]);
    for (const [i, [, q]] of queries.entries()) {
      const r = i === 0 ? base : await timed(client, q);
      samples[i].push(r.ms);
      ratios[i].push(r.ms / base.ms);
      counts[i] = r.rows;
    }
  }
  const results = [];
  for (const [i, [name, q]] of queries.entries()) {
    const plan = await explain(client, q);
    results.push({
      name,
      rows: counts[i],
      medianMs: +median(samples[i]).toFixed(3),
      ratioToPage1: +median(ratios[i]).toFixed(2),
      executionMs: +plan.executionMs.toFixed(3),
      plan: plan.nodes,
    });
  }
  console.log(
    `\nServer time per statement at ${ROWS.toLocaleString('en')} rows (median of ${ROUNDS} interleaved rounds; × page 1 = within-round ratio to the baseline)`,
  );
  console.log(
    table(
      ['query', 'rows', 'ms', '× page 1', 'EXPLAIN ANALYZE ms', 'plan'],
      results.map((r) => [r.name, r.rows, r.medianMs.toFixed(2), r.ratioToPage1.toFixed(2), r.executionMs.toFixed(2), r.plan]),
    ),
  );
  const slowest = results.reduce((a, b) => (b.medianMs > a.medianMs ? b : a));
  console.log(`\nSlowest: ${slowest.name}, ${slowest.medianMs} ms (target, docs/console.md#activity: under 100 ms of server time).`);

  saveResult('consoleActivity', {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverage: loadavg(),
    rows: ROWS,
    days: DAYS,
    rounds: ROUNDS,
    queries: results,
  });
  return true;
}

runMain(main);
