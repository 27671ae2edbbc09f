// Protocol overhead (bench/README.md#targets): in one run, in interleaved rounds, measure our /mcp
// pipeline against two baselines answering the same bytes — a raw node:http server (the ceiling) and a
// bare NestJS controller with a guard and a pipe (bench/servers/nest-floor.mjs: the floor any Nest app
// pays) — and the official SDK's stateless recipe. Ours answers `tools/list` (the product's catalogue,
// from the server as `npm start` runs it) and the conformance fixture `test_simple_text` (the echo, from
// the conformance entry point, test/conformance/main.ts), each in both eras: 2025-11-25 in a session
// (initialize, then Mcp-Session-Id) and 2026-07-28 stateless (its headers and `_meta`); and
// `tools/call list_projects` (one SQL query). Everything is on: credential, rate limit, activity log
// committed before each answer. Beside them, two peers with one trivial tool, `list_projects`, answer
// `tools/list` and `tools/call`: the official SDK's stateless recipe and @rekog/mcp-nest (bench/servers/);
// each of ours is compared with the peer answering the same method. Servers run in child processes; autocannon
// runs here. Prints a table and writes bench/results/latest.json (key "protocol").
//
// The machine is shared: the targets are measured in interleaved rounds (each target once per round),
// each ratio is taken within its round, and the table shows medians over rounds.
//
//   BENCH_ROUNDS=3         rounds
//   BENCH_DURATION=5       seconds measured per target and round
//   BENCH_WARMUP=2         seconds of unmeasured warm-up per target (first round only)
//   BENCH_CONNECTIONS=50
//   BENCH_SDK=false        skip the peers (the SDK recipe and @rekog/mcp-nest)
//   BENCH_CPU_PROF=true    profile our servers (node --cpu-prof) into bench/results/profiles/
//   BENCH_ONLY=a,b         measure only the targets whose name contains one of these (the baselines always)
import autocannon from 'autocannon';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run, startServer } from '../scripts/lib/server.mjs';
import { build, cpuSeconds, descendantsCpuSeconds, median, saveResult, startChild } from './lib/bench.mjs';
import { summarizeProfile } from './profile-summary.mjs';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WITH_SDK = process.env.BENCH_SDK !== 'false';
const CPU_PROF = process.env.BENCH_CPU_PROF === 'true';
const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : null;
const TARGET_RATIO = 0.15;
const TARGET_VS_SDK = 5;
const TARGET_VS_MCP_NEST = 3;
/** Ours over the bare Nest floor, on the echo and on tools/list, in both eras. */
const TARGET_VS_FLOOR = 0.85;
const RESULTS = join(ROOT, 'bench/results');
const CONFORMANCE_ENTRY = 'dist/conformance/test/conformance/main.js';
const PROFILES = join(RESULTS, 'profiles');

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });
const ECHO = 'test_simple_text';
const ECHO_TEXT = 'This is a simple text response for testing.';
const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';
/** The `_meta` a 2026-07-28 client sends with every request (test/support/wire2026.ts). */
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const legacyList = LIST;
const legacyEcho = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: ECHO, arguments: {} } });
const modernList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } });
const modernEcho = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: ECHO, arguments: {}, _meta: MODERN_META } });
const modernHeaders = (method, name) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });

/** Starts a bench server script; resolves when it prints `listening <port>`. */
async function startBenchServer(script, env = {}) {
  const { pid, match, stop } = await startChild([script], env, /listening (\d+)/, { stderr: 'inherit' });
  return { url: `http://127.0.0.1:${match[1]}/mcp`, pid, stop };
}

/** Resident set size (current and peak) of a process, in MB, from /proc. */
function rss(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return { rssMb: null, peakMb: null };
  }
}

/** Sums and counts of the activity log's histograms in our server's /metrics (null when absent). */
async function activityMetrics(origin) {
  try {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const value = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    const m = {
      lagSum: value('reblog_activity_commit_lag_seconds_sum'),
      lagCount: value('reblog_activity_commit_lag_seconds_count'),
      batchSum: value('reblog_activity_batch_size_sum'),
      batchCount: value('reblog_activity_batch_size_count'),
    };
    return Object.values(m).some(Number.isNaN) ? null : m;
  } catch {
    return null;
  }
}

async function post(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

function cannon(url, headers, body, duration) {
  return autocannon({ url, method: 'POST', headers, body, connections: CONNECTIONS, duration });
}

/** Warm-up, then a measured run; fails if any answer was not 2xx. */
async function measure({ name, pid, url, body, metricsOrigin, headers: own }, shared, warm) {
  const headers = { ...shared, ...own };
  if (warm && WARMUP > 0) await cannon(url, headers, body, WARMUP);
  process.stdout.write(`  ${name}: `);
  const before = metricsOrigin ? await activityMetrics(metricsOrigin) : null;
  const cpuBefore = cpuSeconds(pid);
  // Our servers run their own embedded PostgreSQL: its CPU is the activity log's (and the tool's) share on the database's side.
  const dbCpuBefore = metricsOrigin ? descendantsCpuSeconds(pid) : NaN;
  const r = await cannon(url, headers, body, DURATION);
  const cpu = cpuSeconds(pid) - cpuBefore;
  const dbCpu = descendantsCpuSeconds(pid) - dbCpuBefore;
  const after = before ? await activityMetrics(metricsOrigin) : null;
  // How long each answer waited for its activity entry's commit, and how many entries a commit held.
  const activity =
    before && after && after.lagCount > before.lagCount
      ? {
          activityCommitWaitMs: +((1000 * (after.lagSum - before.lagSum)) / (after.lagCount - before.lagCount)).toFixed(1),
          activityBatch: +((after.batchSum - before.batchSum) / (after.batchCount - before.batchCount)).toFixed(1),
        }
      : {};
  const memory = rss(pid);
  const result = {
    name,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    // Share of one core the server process used while measured: far below 100% means it waits (I/O), not computes.
    cpuPct: Number.isNaN(cpu) ? null : Math.round((100 * cpu) / DURATION),
    // CPU the server spent per answer: steadier than req/s when other work shares the machine.
    cpuMsPerRequest: Number.isNaN(cpu) || !r.requests.total ? null : +((1000 * cpu) / r.requests.total).toFixed(3),
    // PostgreSQL's CPU per answer (ours only): on a machine of two cores it competes with the server and the load.
    dbCpuMsPerRequest: Number.isNaN(dbCpu) || !r.requests.total ? null : +((1000 * dbCpu) / r.requests.total).toFixed(3),
    ...memory,
    ...activity,
  };
  console.log(
    `${result.rps} req/s${result.activityCommitWaitMs !== undefined ? ` (activity log: ${result.activityCommitWaitMs} ms mean wait for the commit, ${result.activityBatch} entries per commit)` : ''}` +
      (result.dbCpuMsPerRequest !== null ? `, PostgreSQL ${Math.round(1000 * result.dbCpuMsPerRequest)} µs CPU per request` : ''),
  );
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts — the figures would be meaningless.`);
  return result;
}

/** Medians over rounds of each target's figures, and of its ratios taken within each round. */
function summarize(targets, rounds) {
  return targets.map((target) => {
    const runs = rounds.map((round) => round[target.name]);
    const within = (other, field) => rounds.map((round) => (round[other] && round[target.name][field] ? round[target.name][field] / round[other][field] : NaN));
    const m = (field) => median(runs.map((r) => r[field]));
    // Other CPU per request ÷ ours: above 1, an answer here costs less CPU than there.
    const cpuWithin = (other) => median(rounds.map((round) => (round[other] ? round[other].cpuMsPerRequest / round[target.name].cpuMsPerRequest : NaN)));
    return {
      name: target.name,
      floor: target.floor ?? null,
      rps: Math.round(m('rps')),
      p50: m('p50'),
      p99: m('p99'),
      cpuPct: m('cpuPct'),
      cpuMsPerRequest: m('cpuMsPerRequest'),
      dbCpuMsPerRequest: m('dbCpuMsPerRequest'),
      rssMb: runs.at(-1).rssMb,
      peakMb: runs.at(-1).peakMb,
      activityCommitWaitMs: m('activityCommitWaitMs'),
      ratioToBaseline: median(within(BASELINE, 'rps')),
      ratioToFloor: target.floor ? median(within(target.floor, 'rps')) : null,
      ratioToSdk: median(within(peer(SDK, target.name), 'rps')),
      ratioToMcpNest: median(within(peer(MCP_NEST, target.name), 'rps')),
      cpuRatioToBaseline: cpuWithin(BASELINE),
      cpuRatioToFloor: target.floor ? cpuWithin(target.floor) : null,
      // The spread of requests/s over rounds (max/min - 1): how noisy this target was in this run.
      rpsSpread: runs.length > 1 ? +(Math.max(...runs.map((r) => r.rps)) / Math.min(...runs.map((r) => r.rps)) - 1).toFixed(3) : null,
      rounds: runs,
    };
  });
}

function table(rows) {
  const head = [
    'target',
    'req/s',
    'spread',
    'p50 ms',
    'p99 ms',
    'CPU %',
    'CPU µs/req',
    'DB µs/req',
    'RSS MB',
    'peak MB',
    '× raw',
    '× floor',
    'CPU × floor',
    '× SDK',
    '× mcp-nest',
  ];
  const fixed = (v, digits) => (v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));
  const lines = rows.map((r) => [
    r.name,
    String(r.rps),
    r.rpsSpread === null ? '-' : `${Math.round(100 * r.rpsSpread)}%`,
    fixed(r.p50, 0),
    fixed(r.p99, 0),
    fixed(r.cpuPct, 0),
    fixed(r.cpuMsPerRequest === null ? null : 1000 * r.cpuMsPerRequest, 0),
    fixed(r.dbCpuMsPerRequest === null ? null : 1000 * r.dbCpuMsPerRequest, 0),
    String(r.rssMb ?? '-'),
    String(r.peakMb ?? '-'),
    fixed(r.ratioToBaseline, 3),
    fixed(r.ratioToFloor, 3),
    fixed(r.cpuRatioToFloor, 3),
    fixed(r.ratioToSdk, 1),
    fixed(r.ratioToMcpNest, 1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

const BASELINE = 'raw node:http tools/list (baseline)';
const FLOOR_LIST = 'Nest floor tools/list';
const FLOOR_ECHO = 'Nest floor tools/call echo';
const SDK = 'SDK stateless';
const MCP_NEST = 'mcp-nest stateless';
/** A peer's target answering the same method as the target named: its own one-tool catalogue, or the trivial call. */
const peer = (name, target) => `${name} ${target.includes('tools/list') ? 'tools/list' : 'tools/call'}`;

/** A 2025-11-25 session on our server: initialize, then notifications/initialized; resolves to its headers. */
async function legacySession(server) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${server.key}` };
  const init = await fetch(server.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
    }),
  });
  const id = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !id) throw new Error(`initialize answered ${init.status}: ${(await init.text()).slice(0, 300)}`);
  await init.text();
  const session = { 'mcp-session-id': id, 'mcp-protocol-version': LEGACY };
  const ack = await fetch(server.url, {
    method: 'POST',
    headers: { ...headers, ...session },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
  return session;
}

/** Checks one answer of a target before it is measured. */
async function check(target, shared, expect) {
  const res = await post(target.url, { ...shared, ...target.headers }, target.body);
  const body = /event-stream/.test(res.type) ? JSON.parse(/^data: (.*)$/m.exec(res.text)?.[1] ?? 'null') : JSON.parse(res.text);
  if (res.status !== 200 || !body?.result || !expect(body.result)) throw new Error(`${target.name} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res;
}

async function main() {
  await build();
  if (process.env.BENCH_SKIP_BUILD !== 'true') await run('npx', ['tsc', '-p', 'tsconfig.conformance.json']);
  if (CPU_PROF) {
    rmSync(PROFILES, { recursive: true, force: true });
    mkdirSync(PROFILES, { recursive: true });
  }
  console.log(
    `Protocol bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${CONNECTIONS} connections, ` +
      `${ROUNDS} rounds × ${DURATION} s per target (+${WARMUP} s warm-up). Shared machine: compare ratios, not absolutes.\n`,
  );

  const profiling = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', PROFILES] : [];
  const ours = await startServer({ nodeArgs: profiling });
  const children = [ours];
  const work = join(tmpdir(), `reblog-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    // The conformance entry point: the same server plus the fixture tools (the echo among them).
    const fixtures = await startServer({ nodeArgs: profiling, entry: CONFORMANCE_ENTRY, env: { CONFORMANCE_FIXTURES: 'true' } });
    children.push(fixtures);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${ours.key}`,
    };
    const sessionless = { 'mcp-protocol-version': LEGACY };
    const oursSession = await legacySession(ours);
    const fixturesSession = await legacySession(fixtures);
    const fixturesAuth = { authorization: `Bearer ${fixtures.key}` };
    const hasProjects = (r) => !r.isError && r.structuredContent?.items?.length > 0;
    const isEcho = (r) => !r.isError && r.content?.[0]?.text === ECHO_TEXT;

    const listing = {
      name: 'ours tools/list 2025 (session)',
      pid: ours.pid,
      url: ours.url,
      body: legacyList,
      headers: oursSession,
      metricsOrigin: ours.origin,
      floor: FLOOR_LIST,
    };
    const listed = await check(listing, headers, (r) => r.tools?.some((t) => t.name === 'list_projects'));
    const bodyFile = join(work, 'tools-list.json');
    writeFileSync(bodyFile, listed.text);

    const raw = await startBenchServer(join(ROOT, 'bench/servers/raw-http.mjs'), { BENCH_BODY_FILE: bodyFile });
    children.push(raw);
    const nest = await startBenchServer(join(ROOT, 'bench/servers/nest-floor.mjs'), { BENCH_BODY_FILE: bodyFile, BENCH_TOKEN: ours.key });
    children.push(nest);
    const baselines = [
      { name: BASELINE, pid: raw.pid, url: raw.url, body: LIST },
      { name: FLOOR_LIST, pid: nest.pid, url: nest.url, body: LIST },
      { name: FLOOR_ECHO, pid: nest.pid, url: nest.url, body: legacyEcho },
    ];
    const measured = [
      listing,
      {
        name: 'ours tools/list 2026 (stateless)',
        pid: ours.pid,
        url: ours.url,
        body: modernList,
        headers: modernHeaders('tools/list'),
        metricsOrigin: ours.origin,
        floor: FLOOR_LIST,
      },
      {
        name: 'ours echo 2025 (session)',
        pid: fixtures.pid,
        url: fixtures.url,
        body: legacyEcho,
        headers: { ...fixturesAuth, ...fixturesSession },
        metricsOrigin: fixtures.origin,
        floor: FLOOR_ECHO,
      },
      {
        name: 'ours echo 2026 (stateless)',
        pid: fixtures.pid,
        url: fixtures.url,
        body: modernEcho,
        headers: { ...fixturesAuth, ...modernHeaders('tools/call', ECHO) },
        metricsOrigin: fixtures.origin,
        floor: FLOOR_ECHO,
      },
      { name: 'ours tools/call list_projects 2025', pid: ours.pid, url: ours.url, body: CALL, headers: sessionless, metricsOrigin: ours.origin },
    ].filter((t) => !ONLY || ONLY.some((o) => t.name.includes(o)));
    for (const t of measured)
      await check(t, headers, t.name.includes('echo') ? isEcho : t.name.includes('list_projects') ? hasProjects : (r) => r.tools?.length > 0);
    await check(baselines[1], headers, (r) => r.tools?.length > 0);
    await check(baselines[2], headers, isEcho);
    const targets = [...baselines, ...measured];
    if (WITH_SDK) {
      for (const [name, script] of [
        [SDK, 'sdk-stateless.mjs'],
        [MCP_NEST, 'mcp-nest-stateless.mjs'],
      ]) {
        const server = await startBenchServer(join(ROOT, 'bench/servers', script));
        children.push(server);
        const listing = { name: peer(name, 'tools/list'), pid: server.pid, url: server.url, body: LIST, headers: sessionless };
        const call = { name: peer(name, 'tools/call'), pid: server.pid, url: server.url, body: CALL, headers: sessionless };
        await check(listing, headers, (r) => r.tools?.some((t) => t.name === 'list_projects'));
        await check(call, headers, (r) => r.content?.[0]?.text?.includes('Demo blog'));
        targets.push(listing, call);
      }
    }

    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      console.log(`round ${i + 1}/${ROUNDS} (load average ${loadavg()[0].toFixed(1)})`);
      const round = {};
      for (const target of targets) round[target.name] = await measure(target, headers, i === 0);
      rounds.push(round);
    }
    const rows = summarize(targets, rounds);
    console.log('\n' + table(rows) + '\n');
    console.log(
      'Medians over rounds; the ratios are taken within each round ("× floor": req/s over the Nest floor answering the same method; "CPU × floor": the floor\'s CPU per request over ours; "spread": max/min req/s over rounds − 1). RSS is of the server process alone (not its PostgreSQL).\n',
    );

    const verdicts = [];
    for (const row of rows.filter((r) => r.name.startsWith('ours'))) {
      verdicts.push({
        target: `${row.name} ≥ ${TARGET_RATIO} × raw node:http`,
        value: +row.ratioToBaseline.toFixed(3),
        met: row.ratioToBaseline >= TARGET_RATIO,
      });
      if (row.floor)
        verdicts.push({
          target: `${row.name} ≥ ${TARGET_VS_FLOOR} × the Nest floor`,
          value: +row.ratioToFloor.toFixed(3),
          met: row.ratioToFloor >= TARGET_VS_FLOOR,
        });
      if (WITH_SDK) {
        verdicts.push({ target: `${row.name} ≥ ${TARGET_VS_SDK} × SDK stateless`, value: +row.ratioToSdk.toFixed(1), met: row.ratioToSdk >= TARGET_VS_SDK });
        verdicts.push({
          target: `${row.name} ≥ ${TARGET_VS_MCP_NEST} × @rekog/mcp-nest`,
          value: +row.ratioToMcpNest.toFixed(1),
          met: row.ratioToMcpNest >= TARGET_VS_MCP_NEST,
        });
      }
    }
    for (const v of verdicts) console.log(`${v.met ? 'MET   ' : 'MISSED'}  ${v.target}: ${v.value}`);

    await ours.stop();
    await fixtures.stop();
    children.splice(0, 2);
    let profiles;
    if (CPU_PROF) {
      profiles = readdirSync(PROFILES)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((file) => ({ file: join('bench/results/profiles', file), top: summarizeProfile(join(PROFILES, file), 20) }));
      for (const profile of profiles) {
        console.log(`\nCPU profile (${profile.file}), top self time:`);
        for (const f of profile.top) console.log(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
      }
    }

    console.log();
    saveResult('protocol', {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadAverage: loadavg(),
      connections: CONNECTIONS,
      rounds: ROUNDS,
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      rows,
      verdicts,
      ...(profiles ? { profiles } : {}),
    });
    process.exitCode = verdicts.every((v) => v.met) ? 0 : 1;
  } finally {
    for (const child of children) await child.stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 2;
});
