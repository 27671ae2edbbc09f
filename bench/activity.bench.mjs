// Activity log and rate limit (bench/README.md#targets: throughput with the log on vs off ≥ 0.85;
// docs/scaling.md#measured for the figures). In one run, interleaved rounds of:
//   - the server as shipped (activity log on, in-process rate-limit store),
//   - the same server with the log off (bench/servers/activity-off.mjs, preloaded: the baseline),
//   - the server with the rate-limit windows in Redis (a redis-server started here),
// each with its own embedded PostgreSQL (default durability: every commit is flushed), driven by
// autocannon at 50 connections with `tools/list` and `tools/call list_projects`. Ratios are taken
// within each round; the table shows medians. Then the admin listing at BENCH_ACTIVITY_ROWS rows.
// Prints a table and writes bench/results/latest.json (key "activity").
//
//   BENCH_ROUNDS=5  BENCH_DURATION=5  BENCH_WARMUP=2  BENCH_CONNECTIONS=50
//   BENCH_ACTIVITY_ROWS=1000000   rows seeded for the listing part (0: skip it)
//   BENCH_SKIP_BUILD=true         reuse dist/
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, ROOT, startServer } from '../scripts/lib/server.mjs';
import { build, cpuSeconds, descendantsCpuSeconds, median, saveResult, table } from './lib/bench.mjs';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROWS = Number(process.env.BENCH_ACTIVITY_ROWS ?? 1_000_000);
const TARGET_LOG_RATIO = 0.85;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

/** Bytes of WAL a server's embedded PostgreSQL has written so far (its insert position). */
async function walBytes(server) {
  const client = new pg.Client({ connectionString: databaseUrl(server) });
  await client.connect();
  try {
    return (await client.query(`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::float8 AS bytes`)).rows[0].bytes;
  } finally {
    await client.end();
  }
}

async function metric(origin, name) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

async function measure(target, warm) {
  const opts = { url: target.server.url, method: 'POST', headers: target.headers, body: target.body, connections: CONNECTIONS };
  if (warm && WARMUP > 0) await autocannon({ ...opts, duration: WARMUP });
  process.stdout.write(`  ${target.name}: `);
  const lag0 = [
    await metric(target.server.origin, 'reblog_activity_commit_lag_seconds_sum'),
    await metric(target.server.origin, 'reblog_activity_commit_lag_seconds_count'),
  ];
  const batch0 = [await metric(target.server.origin, 'reblog_activity_batch_size_sum'), await metric(target.server.origin, 'reblog_activity_batch_size_count')];
  const cpu0 = cpuSeconds(target.server.pid);
  const pg0 = descendantsCpuSeconds(target.server.pid);
  const wal0 = await walBytes(target.server);
  const r = await autocannon({ ...opts, duration: DURATION });
  const wal = (await walBytes(target.server)) - wal0;
  const cpu = cpuSeconds(target.server.pid) - cpu0;
  const pgCpu = descendantsCpuSeconds(target.server.pid) - pg0;
  const lag1 = [
    await metric(target.server.origin, 'reblog_activity_commit_lag_seconds_sum'),
    await metric(target.server.origin, 'reblog_activity_commit_lag_seconds_count'),
  ];
  const batch1 = [await metric(target.server.origin, 'reblog_activity_batch_size_sum'), await metric(target.server.origin, 'reblog_activity_batch_size_count')];
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${target.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts — the figures would be meaningless.`);
  const commits = lag1[1] - lag0[1];
  const result = {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuMsPerRequest: r.requests.total ? +((1000 * cpu) / r.requests.total).toFixed(3) : null,
    // The database's share: what the log costs where the time is not the server's own.
    pgCpuMsPerRequest: r.requests.total && !Number.isNaN(pgCpu) ? +((1000 * pgCpu) / r.requests.total).toFixed(3) : null,
    // What the log writes per answer (row and index entries, commit records): exact, unlike the CPU figures.
    walBytesPerRequest: r.requests.total ? Math.round(wal / r.requests.total) : null,
    commitWaitMs: commits > 0 ? +((1000 * (lag1[0] - lag0[0])) / commits).toFixed(2) : null,
    entriesPerCommit: batch1[1] > batch0[1] ? +((batch1[0] - batch0[0]) / (batch1[1] - batch0[1])).toFixed(1) : null,
  };
  console.log(
    `${result.rps} req/s, p99 ${result.p99} ms, CPU ${result.cpuMsPerRequest} + PostgreSQL ${result.pgCpuMsPerRequest} ms/req, WAL ${result.walBytesPerRequest} B/req${result.commitWaitMs !== null ? `, commit wait ${result.commitWaitMs} ms, ${result.entriesPerCommit} entries/commit` : ''}`,
  );
  return result;
}

/** Debian's redis-server on a free port, in memory only. */
async function startRedis() {
  if (spawnSync('redis-server', ['--version']).error) return null;
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((ready, fail) => {
    let out = '';
    child.stdout.on('data', (c) => ((out += c), out.includes('Ready to accept') && ready()));
    child.once('exit', (code) => fail(new Error(`redis-server exited ${code}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') };
}

/** The embedded PostgreSQL of a server started by scripts/lib/server.mjs. */
function databaseUrl(server) {
  const password = readFileSync(join(server.dataDir, 'postgres.password'), 'utf8').trim();
  const port = readFileSync(join(server.dataDir, 'postgres', 'postmaster.pid'), 'utf8')
    .split('\n')[3]
    .trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/reblog`;
}

/** `rows` activity entries, 70% in the demo account over 20 credentials, the rest in 20 other accounts. */
async function seedActivity(url, rows) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const {
      rows: [demo],
    } = await client.query(`SELECT a.id AS account_id, c.id AS credential_id FROM accounts a JOIN credentials c ON c.account_id = a.id LIMIT 1`);
    await client.query(
      `
      INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, client_name, client_version, session_id, method, tool, project_id, outcome, error, duration_ms, count)
      SELECT (lpad(to_hex((extract(epoch FROM s.ts) * 1000)::bigint), 12, '0') || '7' || substr(md5(s.g::text), 1, 3) || '8' || substr(md5(s.g::text), 4, 15))::uuid,
             s.ts, CASE WHEN s.g % 10 < 7 THEN $1::uuid ELSE md5('acct' || (s.g % 20))::uuid END, 'api_key',
             CASE WHEN s.g % 20 = 0 THEN $2::uuid ELSE md5('cred' || (s.g % 20))::uuid END, 'key', 'bench', '1.0', NULL,
             CASE WHEN s.r < 0.02 THEN 'initialize' WHEN s.r < 0.1 THEN 'tools/list' ELSE 'tools/call' END,
             CASE WHEN s.r < 0.1 THEN NULL WHEN s.r < 0.5 THEN 'list_articles' WHEN s.r < 0.8 THEN 'get_article' WHEN s.r < 0.999 THEN 'list_projects' ELSE 'delete_article' END,
             NULL,
             CASE WHEN s.r2 < 0.97 THEN 'ok' WHEN s.r2 < 0.985 THEN 'invalid' WHEN s.r2 < 0.995 THEN 'tool_error' WHEN s.r2 < 0.9995 THEN 'rate_limited' ELSE 'denied' END,
             NULL, 3, 1
        FROM (SELECT g, now() - make_interval(secs => g / 100.0) AS ts, random() AS r, random() AS r2 FROM generate_series(1, $3::int) g) s`,
      [demo.account_id, demo.credential_id, rows],
    );
    await client.query('VACUUM ANALYZE activity_log');
    const {
      rows: [mid],
    } = await client.query(`SELECT id FROM activity_log WHERE account_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1`, [demo.account_id, Math.floor(rows * 0.35)]);
    return { accountId: demo.account_id, credentialId: demo.credential_id, midId: mid.id };
  } finally {
    await client.end();
  }
}

async function listing(server, seeded) {
  const base = `/admin/v1/accounts/${seeded.accountId}/activity?limit=50`;
  const cursor = Buffer.from(seeded.midId, 'utf8').toString('base64url');
  const queries = [
    ['no filter, page 1', base],
    ['no filter, deep page (cursor mid-table)', `${base}&cursor=${cursor}`],
    ['outcome=denied (0.05% of rows)', `${base}&outcome=denied`],
    ['outcome=rate_limited', `${base}&outcome=rate_limited`],
    ['credential_id', `${base}&credential_id=${seeded.credentialId}`],
    ['method=initialize', `${base}&method=initialize`],
    ['tool=delete_article (0.1%)', `${base}&tool=delete_article`],
    ['tool=nothing (no match)', `${base}&tool=nothing`],
    ['tool + outcome', `${base}&tool=list_articles&outcome=denied`],
  ];
  const out = [];
  for (const [name, path] of queries) {
    // Unmeasured first: the first query after seeding reads cold pages.
    await autocannon({ url: `${server.origin}${path}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, connections: 10, duration: 1 });
    const r = await autocannon({ url: `${server.origin}${path}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, connections: 10, duration: 3 });
    if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    out.push({ name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99 });
  }
  const first = out[0].rps;
  for (const row of out) row.ratioToPage1 = +(row.rps / first).toFixed(2);
  return out;
}

async function main() {
  await build();
  console.log(
    `Activity-log bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION} s.\n`,
  );
  const redis = await startRedis();
  if (!redis) console.log('redis-server not found: the Redis rate-limit store is not measured (apt-get install redis-server).');
  const env = { ADMIN_TOKEN };
  const started = [];
  try {
    const on = await startServer({ env });
    started.push(on);
    const off = await startServer({ env, nodeArgs: ['--import', join(ROOT, 'bench/servers/activity-off.mjs')] });
    started.push(off);
    const withRedis = redis ? await startServer({ env: { ...env, REDIS_URL: redis.url } }) : null;
    if (withRedis) started.push(withRedis);
    const headers = (s) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${s.key}`,
      'mcp-protocol-version': '2025-11-25',
    });
    const targets = [
      { name: 'log on: tools/list', server: on, body: LIST },
      { name: 'log off: tools/list', server: off, body: LIST },
      { name: 'log on: tools/call list_projects', server: on, body: CALL },
      { name: 'log off: tools/call list_projects', server: off, body: CALL },
      ...(withRedis ? [{ name: 'Redis rate limit, log on: tools/list', server: withRedis, body: LIST }] : []),
    ].map((t) => ({ ...t, headers: headers(t.server) }));

    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      console.log(`round ${i + 1}/${ROUNDS} (load average ${loadavg()[0].toFixed(1)})`);
      const round = {};
      for (const t of targets) round[t.name] = await measure(t, i === 0);
      rounds.push(round);
    }
    const ratio = (a, b) => median(rounds.map((r) => (r[a] && r[b] ? r[a].rps / r[b].rps : NaN)));
    const rows = targets.map((t) => {
      const runs = rounds.map((r) => r[t.name]);
      const m = (f) => median(runs.map((x) => x[f]));
      return {
        name: t.name,
        rps: Math.round(m('rps')),
        p50: m('p50'),
        p99: m('p99'),
        cpuMsPerRequest: m('cpuMsPerRequest'),
        pgCpuMsPerRequest: m('pgCpuMsPerRequest'),
        walBytesPerRequest: m('walBytesPerRequest'),
        commitWaitMs: m('commitWaitMs'),
        entriesPerCommit: m('entriesPerCommit'),
        rounds: runs,
      };
    });
    const ratios = {
      logOnOffToolsList: ratio('log on: tools/list', 'log off: tools/list'),
      logOnOffListProjects: ratio('log on: tools/call list_projects', 'log off: tools/call list_projects'),
      redisVsInProcessToolsList: withRedis ? ratio('Redis rate limit, log on: tools/list', 'log on: tools/list') : null,
    };
    const f = (v, d) => (v === null || v === undefined ? '-' : v.toFixed(d));
    console.log(
      '\n' +
        table(
          ['target', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'PG CPU ms/req', 'WAL B/req', 'commit wait ms', 'entries/commit'],
          rows.map((r) => [
            r.name,
            r.rps,
            f(r.p50, 0),
            f(r.p99, 0),
            f(r.cpuMsPerRequest, 3),
            f(r.pgCpuMsPerRequest, 3),
            f(r.walBytesPerRequest, 0),
            f(r.commitWaitMs, 2),
            f(r.entriesPerCommit, 1),
          ]),
        ),
    );
    console.log(`\nlog on / log off: tools/list ${f(ratios.logOnOffToolsList, 3)}, tools/call list_projects ${f(ratios.logOnOffListProjects, 3)}`);
    if (withRedis) console.log(`Redis rate-limit store / in-process: tools/list ${f(ratios.redisVsInProcessToolsList, 3)}`);
    const verdicts = [
      {
        target: `log on / off (tools/list) ≥ ${TARGET_LOG_RATIO}`,
        value: +ratios.logOnOffToolsList.toFixed(3),
        met: ratios.logOnOffToolsList >= TARGET_LOG_RATIO,
      },
      {
        target: `log on / off (tools/call list_projects) ≥ ${TARGET_LOG_RATIO}`,
        value: +ratios.logOnOffListProjects.toFixed(3),
        met: ratios.logOnOffListProjects >= TARGET_LOG_RATIO,
      },
    ];

    let listingRows = null;
    if (ROWS > 0) {
      console.log(`\nSeeding ${ROWS.toLocaleString('en')} activity entries...`);
      const seeded = await seedActivity(databaseUrl(on), ROWS);
      listingRows = await listing(on, seeded);
      console.log('\nGET /admin/v1/accounts/:id/activity?limit=50 at ' + `${ROWS.toLocaleString('en')} rows (10 connections, 3 s each)`);
      console.log(
        table(
          ['query', 'req/s', 'p50 ms', 'p99 ms', '× page 1'],
          listingRows.map((r) => [r.name, r.rps, r.p50, r.p99, r.ratioToPage1.toFixed(2)]),
        ),
      );
    }
    console.log('');
    for (const v of verdicts) console.log(`${v.met ? 'MET   ' : 'MISSED'}  ${v.target}: ${v.value}`);

    console.log('');
    saveResult('activity', {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadAverage: loadavg(),
      connections: CONNECTIONS,
      rounds: ROUNDS,
      durationSeconds: DURATION,
      rows,
      ratios,
      listing: listingRows && { rows: ROWS, queries: listingRows },
      verdicts,
    });
    process.exitCode = verdicts.every((v) => v.met) ? 0 : 1;
  } finally {
    for (const s of started) await s.stop().catch(() => undefined);
    redis?.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 2;
});
