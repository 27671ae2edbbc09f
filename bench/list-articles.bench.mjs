// list_articles at 100k articles and deep pages (bench/README.md#targets), in one run:
//
//   baseline        bench/servers/articles-raw-pg.mjs: node:http + pg running the page-1 query WITHOUT a total
//   ours page 1     tools/call list_articles {page: 1} through the whole pipeline (auth, rate limit raised,
//                   activity log on, argument guard, validation, routing), WITH pagination.total; the project does
//                   not change, so after the first call each one reads the generation and answers the kept page
//                   (src/articles/article-listing.service.ts, LISTING_CACHE_PAGES)
//   ours page 4000  {page: 4000} (offset 79,980 of 85,000), from the instance that keeps no page (below): what
//                   the keyset anchors make of a deep page, compared with that instance's page 1
//   ours search     {search: "topic42"} (about 1 title in 50 of the project matches), with its total
//   raw + total     (information) the baseline server running our page-1 statement, total included: the
//                   query's own cost, so the gap between baseline and ours splits into query and pipeline
//   nothing kept    (information) page 1 from a second instance of ours started with LISTING_CACHE_PAGES=0: what
//                   every call would cost if the project changed between any two of them
//
// One embedded PostgreSQL in a temporary folder, seeded by bench/articles-seed.mjs (100,000 articles with
// ~2 KB bodies, 85,000 in one project); both servers run in child processes, autocannon runs here.
// Prints a table and the ratios, checks the plans (EXPLAIN), writes bench/results/latest.json (key "articles").
// Exit code 1 when a target is missed: page 1 ≥ 0.7 × baseline, page-1 p99 ≤ 50 ms, page 4000 ≤ 3 × page 1
// (both read, nothing kept).
//
// The targets are measured in rounds (baseline, page 1, raw + total, page 4000, search, nothing kept, then again), so that a change of
// load on a shared machine hits them alike; each figure is the median over the rounds, and each ratio the
// median of the ratios within a round.
//
//   BENCH_DURATION=5       seconds measured per target and round
//   BENCH_ROUNDS=3
//   BENCH_WARMUP=3         seconds of unmeasured warm-up per target (once)
//   BENCH_CONNECTIONS=50
//   BENCH_SKIP_BUILD=true  reuse dist/ as it is
//   BENCH_CPU_PROF=true    run our server with node --cpu-prof into bench/results/profiles/ and print its top
//                          functions by self time (the profile covers every target of ours, page 1 most)
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ROOT } from '../scripts/lib/server.mjs';
import { atCleanup, build, cpuSeconds, median, runMain, saveResult, startChild, startDatabase, startProductionServer } from './lib/bench.mjs';
import { SEARCH_TERM, seedArticles } from './articles-seed.mjs';
import { summarizeProfile } from './profile-summary.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TARGETS = { page1VsBaseline: 0.7, page1P99Ms: 50, page4000VsPage1: 3 };
const RESULTS = join(ROOT, 'bench/results');
const ADMIN_TOKEN = 'bench-admin-' + randomBytes(12).toString('hex');
const CPU_PROF = process.env.BENCH_CPU_PROF === 'true';
const PROFILES = join(RESULTS, 'profiles');

const call = (args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_articles', arguments: args } });

async function check(url, headers, args, name) {
  const res = await fetch(url, { method: 'POST', headers, body: call(args) });
  const body = await res.json();
  if (res.status !== 200 || body.error || body.result?.isError) throw new Error(`${name}: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body.result.structuredContent;
}

/** Our server's own view (GET /metrics): time in the server per tools/call, and the wait for the activity entry's commit. */
async function serverMetrics(origin) {
  try {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const sum = (pattern) => {
      let total = 0;
      for (const m of text.matchAll(new RegExp(`^${pattern} (\\S+)$`, 'gm'))) total += Number(m[1]);
      return total;
    };
    return {
      serverSum: sum('reblog_mcp_request_duration_seconds_sum\\{method="tools/call"[^}]*\\}'),
      serverCount: sum('reblog_mcp_request_duration_seconds_count\\{method="tools/call"[^}]*\\}'),
      lagSum: sum('reblog_activity_commit_lag_seconds_sum'),
      lagCount: sum('reblog_activity_commit_lag_seconds_count'),
      batchSum: sum('reblog_activity_batch_size_sum'),
      batchCount: sum('reblog_activity_batch_size_count'),
    };
  } catch {
    return null;
  }
}

const cannon = (url, headers, body, duration) => autocannon({ url, method: 'POST', headers, body, connections: CONNECTIONS, duration });

async function measure(name, pid, url, headers, body, metricsOrigin) {
  process.stdout.write(`  ${name}: ${DURATION} s at ${CONNECTIONS} connections... `);
  const before = metricsOrigin ? await serverMetrics(metricsOrigin) : null;
  const cpuBefore = cpuSeconds(pid);
  const r = await cannon(url, headers, body, DURATION);
  const cpu = cpuSeconds(pid) - cpuBefore;
  const after = before ? await serverMetrics(metricsOrigin) : null;
  const per = (s, c) => (after && before && after[c] > before[c] ? +((1000 * (after[s] - before[s])) / (after[c] - before[c])).toFixed(1) : null);
  const result = {
    name,
    rps: Math.round(r.requests.average),
    meanMs: +r.latency.average.toFixed(2),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    cpuPct: Number.isNaN(cpu) ? null : Math.round((100 * cpu) / DURATION),
    ...(metricsOrigin
      ? {
          serverMeanMs: per('serverSum', 'serverCount'),
          activityCommitWaitMs: per('lagSum', 'lagCount'),
          activityBatch:
            after && after.batchCount > before.batchCount ? +((after.batchSum - before.batchSum) / (after.batchCount - before.batchCount)).toFixed(1) : null,
        }
      : {}),
  };
  const inside =
    result.serverMeanMs != null
      ? ` (in the server ${result.serverMeanMs} ms, of which waiting for the activity commit ${result.activityCommitWaitMs} ms; ${result.activityBatch} entries per commit)`
      : '';
  console.log(`${result.rps} req/s, mean ${result.meanMs} ms, p99 ${result.p99} ms${inside}`);
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts — the figures would be meaningless.`);
  return result;
}

/** The plans of the statements our listing runs (the SQL of src/articles/article-listing.service.ts). */
async function plans(url, scope) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const explain = async (sql, params) => JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN']);
  try {
    const filter = `account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND (lower(title) LIKE $3 OR handle LIKE $3)`;
    const searchParams = [scope.accountId, scope.projectId, `%${SEARCH_TERM}%`];
    const search =
      (await explain(`SELECT id FROM articles a WHERE ${filter} ORDER BY updated_at DESC, id DESC LIMIT 20 OFFSET 0`, searchParams)) +
      (await explain(`SELECT count(*) FROM (SELECT 1 FROM articles WHERE ${filter} LIMIT 10001) m`, searchParams));
    const deep = await explain(
      `SELECT id, updated_at FROM articles WHERE project_id = $1 AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT 20 OFFSET 79980`,
      [scope.projectId],
    );
    const anchored = await explain(
      `SELECT id, updated_at FROM articles WHERE project_id = $1 AND deleted_at IS NULL AND (updated_at, id) <= ($2::timestamptz, $3::uuid) ORDER BY updated_at DESC, id DESC LIMIT 20 OFFSET 200`,
      [scope.projectId, new Date().toISOString(), '00000000-0000-4000-8000-000000000000'],
    );
    const total = await explain(`SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*'`, [scope.accountId, scope.projectId]);
    return {
      searchUsesTitleTrigramIndex: search.includes('articles_title_trgm'),
      searchUsesHandleTrigramIndex: search.includes('articles_handle_trgm'),
      pageIdsIndexOnly: deep.includes('Index Only Scan') && deep.includes('articles_list_idx'),
      anchorSeekIsIndexCondition: /"Index Cond":\s*"[^"]*ROW\(updated_at, id\) <=/.test(anchored),
      // A lookup of one counts row, never a pass over the articles.
      totalFromCountsRow: total.includes('article_counts') && !/"Relation Name":\s*"articles"/.test(total),
    };
  } finally {
    await client.end();
  }
}

function table(rows, baseline, page1) {
  const head = ['target', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'CPU %', '× baseline', '× page-1 latency'];
  const lines = rows.map((r) => [
    r.name,
    String(r.rps),
    String(r.meanMs),
    String(r.p50),
    String(r.p99),
    r.cpuPct === null ? '-' : String(r.cpuPct),
    (r.rps / baseline.rps).toFixed(2),
    r === baseline ? '-' : (r.meanMs / page1.meanMs).toFixed(2),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
}

async function main() {
  const loadBefore = loadavg();
  console.log(
    `list_articles bench: ${cpus().length} CPUs (load average ${loadavg()[0].toFixed(1)}), node ${process.version}, ${ROUNDS} rounds of ${DURATION} s per target, ${CONNECTIONS} connections`,
  );
  await build();
  const database = await startDatabase('articles');
  atCleanup(database.stop);
  const { db } = database;
  const seedStarted = Date.now();
  const scope = await seedArticles(db.url, { log: (line) => console.log(`  ${line}`) });
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  console.log(`seeded 100,000 articles in ${seedSeconds.toFixed(1)} s`);

  if (CPU_PROF) {
    rmSync(PROFILES, { recursive: true, force: true });
    mkdirSync(PROFILES, { recursive: true });
  }
  const ours = await startProductionServer(database, ADMIN_TOKEN, { nodeArgs: CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', PROFILES] : [] });
  const { origin } = ours;
  const unkept = await startProductionServer(database, ADMIN_TOKEN, { env: { LISTING_CACHE_PAGES: '0' } });
  const created = await fetch(`${origin}/admin/v1/accounts/${scope.accountId}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['read'], projects: [{ project_id: scope.projectId, role: 'viewer' }] }),
  }).then((r) => r.json());
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${created.key}` };

  const baselineServer = await startChild(
    ['bench/servers/articles-raw-pg.mjs'],
    { DATABASE_URL: db.url, BENCH_ACCOUNT_ID: scope.accountId, BENCH_PROJECT_ID: scope.projectId },
    /listening (\d+)/,
  );
  const baselineUrl = `http://127.0.0.1:${baselineServer.match[1]}/mcp`;
  // Our page-1 statement (with the total) behind the same bare server: what the query costs without the pipeline.
  const rawOursServer = await startChild(
    ['bench/servers/articles-raw-pg.mjs'],
    { DATABASE_URL: db.url, BENCH_ACCOUNT_ID: scope.accountId, BENCH_PROJECT_ID: scope.projectId, BENCH_WITH_TOTAL: 'true' },
    /listening (\d+)/,
  );
  const rawOursUrl = `http://127.0.0.1:${rawOursServer.match[1]}/mcp`;
  const url = `${origin}/mcp`;
  const unkeptUrl = `${unkept.origin}/mcp`;

  // Every target answers what it should before it is measured.
  const first = await check(url, headers, { page: 1 }, 'page 1');
  const deep = await check(unkeptUrl, headers, { page: 4000 }, 'page 4000');
  const found = await check(url, headers, { search: SEARCH_TERM }, 'search');
  const base = await check(baselineUrl, headers, { page: 1 }, 'baseline');
  const rawOurs = await check(rawOursUrl, headers, { page: 1 }, 'raw ours');
  const fresh = await check(unkeptUrl, headers, { page: 1 }, 'nothing kept');
  if (JSON.stringify(fresh) !== JSON.stringify(first)) throw new Error('Page 1 differs between the instance that keeps pages and the one that does not.');
  if (rawOurs.pagination.total !== 85_000) throw new Error(`Our statement behind the bare server answered total ${rawOurs.pagination.total}.`);
  if (first.pagination.total !== 85_000 || first.items.length !== 20 || deep.items.length !== 20 || base.items.length !== 20 || !found.pagination.total) {
    throw new Error(`Unexpected answers: ${JSON.stringify({ first: first.pagination, deep: deep.pagination, found: found.pagination })}`);
  }
  if (JSON.stringify(first.items.map((i) => i.id)) !== JSON.stringify(base.items.map((i) => i.id))) throw new Error('Page 1 differs from the baseline query.');
  console.log(`page 1: total ${first.pagination.total}; page 4000: ${deep.items.length} items; search "${SEARCH_TERM}": total ${found.pagination.total}`);

  const targets = [
    { name: 'baseline: node:http + pg, page 1, no total', pid: baselineServer.pid, url: baselineUrl, body: call({ page: 1 }) },
    { name: 'ours: list_articles page 1 + total', pid: ours.pid, url, body: call({ page: 1 }), metrics: origin },
    { name: 'raw: node:http + pg, our page-1 statement + total', pid: rawOursServer.pid, url: rawOursUrl, body: call({ page: 1 }) },
    { name: 'ours: list_articles page 4000 + total, nothing kept', pid: unkept.pid, url: unkeptUrl, body: call({ page: 4000 }), metrics: unkept.origin },
    { name: `ours: list_articles search "${SEARCH_TERM}" + total`, pid: ours.pid, url, body: call({ search: SEARCH_TERM }), metrics: origin },
    { name: 'ours: list_articles page 1 + total, nothing kept', pid: unkept.pid, url: unkeptUrl, body: call({ page: 1 }), metrics: unkept.origin },
  ];
  // Warm-up (JIT, caches, and page 4000's keyset anchors), then the measured rounds.
  if (WARMUP > 0) for (const target of targets) await cannon(target.url, headers, target.body, WARMUP);
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round} of ${ROUNDS}`);
    const measured = [];
    for (const target of targets) measured.push(await measure(target.name, target.pid, target.url, headers, target.body, target.metrics));
    rounds.push(measured);
  }
  const rows = targets.map((target, i) => {
    const runs = rounds.map((r) => r[i]);
    return {
      name: target.name,
      rps: Math.round(median(runs.map((r) => r.rps))),
      meanMs: +median(runs.map((r) => r.meanMs)).toFixed(2),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      cpuPct: runs.some((r) => r.cpuPct === null) ? null : Math.round(median(runs.map((r) => r.cpuPct))),
      ...(target.metrics && runs.every((r) => r.serverMeanMs != null)
        ? { serverMeanMs: median(runs.map((r) => r.serverMeanMs)), activityCommitWaitMs: median(runs.map((r) => r.activityCommitWaitMs ?? 0)) }
        : {}),
      requests: runs.reduce((sum, r) => sum + r.requests, 0),
      rounds: runs,
    };
  });
  const [baseline, page1] = rows;
  const perRound = (f) => +median(rounds.map(f)).toFixed(3);
  const plan = await plans(db.url, scope);

  console.log('');
  table(rows, baseline, page1);
  const ratios = {
    page1VsBaseline: perRound(([b, p1]) => p1.rps / b.rps),
    page4000VsPage1Latency: perRound(([, , , p4000, , p1]) => p4000.meanMs / p1.meanMs),
    page4000VsPage1P50: perRound(([, , , p4000, , p1]) => p4000.p50 / Math.max(p1.p50, 1)),
    searchVsBaseline: perRound(([b, , , , s]) => s.rps / b.rps),
    ourStatementVsBaseline: perRound(([b, , raw]) => raw.rps / b.rps),
    page1NothingKeptVsBaseline: perRound(([b, , , , , unkeptPage1]) => unkeptPage1.rps / b.rps),
  };
  const checks = {
    page1VsBaseline: ratios.page1VsBaseline >= TARGETS.page1VsBaseline,
    page1P99: page1.p99 <= TARGETS.page1P99Ms,
    page4000VsPage1: ratios.page4000VsPage1Latency <= TARGETS.page4000VsPage1,
    plans: Object.values(plan).every(Boolean),
  };
  console.log('');
  console.log(
    `page 1 with total vs baseline (rps): ${ratios.page1VsBaseline} (target ≥ ${TARGETS.page1VsBaseline}) ${checks.page1VsBaseline ? 'ok' : 'MISSED'}`,
  );
  console.log(`page 1 p99: ${page1.p99} ms (target ≤ ${TARGETS.page1P99Ms} ms) ${checks.page1P99 ? 'ok' : 'MISSED'}`);
  console.log(
    `page 4000 vs page 1, nothing kept (mean latency): ${ratios.page4000VsPage1Latency} (p50: ${ratios.page4000VsPage1P50}) (target ≤ ${TARGETS.page4000VsPage1}) ${checks.page4000VsPage1 ? 'ok' : 'MISSED'}`,
  );
  console.log(`search vs baseline (rps): ${ratios.searchVsBaseline} (no target; its total is counted, up to 10,000 matches)`);
  console.log(`our page-1 statement with total, without the pipeline, vs baseline (rps): ${ratios.ourStatementVsBaseline} (what the total and the query cost)`);
  console.log(
    `page 1 with total, nothing kept (LISTING_CACHE_PAGES=0), vs baseline (rps): ${ratios.page1NothingKeptVsBaseline} (no target; every call reads its page)`,
  );
  console.log(`plans: ${JSON.stringify(plan)}`);

  const out = {
    at: new Date().toISOString(),
    // The 1/5/15-minute load averages at the start and the end: on a shared machine they say how far to trust the figures.
    machine: {
      cpus: cpus().length,
      node: process.version,
      loadavgBefore: loadBefore.map((l) => +l.toFixed(2)),
      loadavgAfter: loadavg().map((l) => +l.toFixed(2)),
    },
    settings: { duration: DURATION, rounds: ROUNDS, warmup: WARMUP, connections: CONNECTIONS, articles: 100_000, bigProject: 85_000, seedSeconds },
    results: rows,
    ratios,
    targets: TARGETS,
    checks,
    plans: plan,
  };
  saveResult('articles', out);
  if (CPU_PROF) {
    await ours.stop(); // the profile is written as the process exits
    for (const file of readdirSync(PROFILES).filter((f) => f.endsWith('.cpuprofile'))) {
      console.log(`\nCPU profile (bench/results/profiles/${file}), top self time:`);
      for (const f of summarizeProfile(join(PROFILES, file), 25)) console.log(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
    }
  }
  return Object.values(checks).every(Boolean);
}

runMain(main);
