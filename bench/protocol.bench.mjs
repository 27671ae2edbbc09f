// Protocol overhead (bench/README.md#targets): in one run, against a raw node:http baseline
// answering the same bytes, measure our tools/list and tools/call list_projects through the whole
// pipeline, and the official SDK's stateless recipe. Servers run in child processes; autocannon
// runs here. Prints a table and writes bench/results/latest.json (key "protocol").
//
// The machine is shared: the targets are measured in interleaved rounds (baseline, ours, SDK,
// then again), each ratio is taken within its round, and the table shows medians over rounds.
//
//   BENCH_ROUNDS=3         rounds
//   BENCH_DURATION=5       seconds measured per target and round
//   BENCH_WARMUP=2         seconds of unmeasured warm-up per target (first round only)
//   BENCH_CONNECTIONS=50
//   BENCH_SDK=false        skip the SDK comparison
//   BENCH_CPU_PROF=true    profile our server (node --cpu-prof) into bench/results/profiles/
import autocannon from 'autocannon';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startServer } from '../scripts/lib/server.mjs';
import { build, cpuSeconds, median, startChild } from './lib/bench.mjs';
import { summarizeProfile } from './profile-summary.mjs';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WITH_SDK = process.env.BENCH_SDK !== 'false';
const CPU_PROF = process.env.BENCH_CPU_PROF === 'true';
const TARGET_RATIO = 0.15;
const TARGET_VS_SDK = 5;
const RESULTS = join(ROOT, 'bench/results');
const PROFILES = join(RESULTS, 'profiles');

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

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
async function measure({ name, pid, url, body, metricsOrigin }, headers, warm) {
  if (warm && WARMUP > 0) await cannon(url, headers, body, WARMUP);
  process.stdout.write(`  ${name}: `);
  const before = metricsOrigin ? await activityMetrics(metricsOrigin) : null;
  const cpuBefore = cpuSeconds(pid);
  const r = await cannon(url, headers, body, DURATION);
  const cpu = cpuSeconds(pid) - cpuBefore;
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
    ...memory,
    ...activity,
  };
  console.log(
    `${result.rps} req/s${result.activityCommitWaitMs !== undefined ? ` (activity log: ${result.activityCommitWaitMs} ms mean wait for the commit, ${result.activityBatch} entries per commit)` : ''}`,
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
    return {
      name: target.name,
      rps: Math.round(m('rps')),
      p50: m('p50'),
      p99: m('p99'),
      cpuPct: m('cpuPct'),
      cpuMsPerRequest: m('cpuMsPerRequest'),
      rssMb: runs.at(-1).rssMb,
      peakMb: runs.at(-1).peakMb,
      activityCommitWaitMs: m('activityCommitWaitMs'),
      ratioToBaseline: median(within(BASELINE, 'rps')),
      ratioToSdk: median(within(SDK, 'rps')),
      // Baseline CPU per request ÷ ours: how many times more CPU an answer costs here.
      cpuRatioToBaseline: median(rounds.map((round) => round[BASELINE].cpuMsPerRequest / round[target.name].cpuMsPerRequest)),
      rounds: runs,
    };
  });
}

function table(rows) {
  const head = ['target', 'req/s', 'p50 ms', 'p99 ms', 'CPU %', 'CPU ms/req', 'RSS MB', 'peak MB', '× baseline', '× SDK', 'CPU × baseline'];
  const fixed = (v, digits) => (v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));
  const lines = rows.map((r) => [
    r.name,
    String(r.rps),
    fixed(r.p50, 0),
    fixed(r.p99, 0),
    fixed(r.cpuPct, 0),
    fixed(r.cpuMsPerRequest, 3),
    String(r.rssMb ?? '-'),
    String(r.peakMb ?? '-'),
    fixed(r.ratioToBaseline, 3),
    fixed(r.ratioToSdk, 1),
    fixed(r.cpuRatioToBaseline, 3),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

const BASELINE = 'raw node:http (baseline)';
const SDK = 'SDK stateless tools/call';

async function main() {
  await build();
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

  const ours = await startServer({ nodeArgs: CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', PROFILES] : [] });
  const children = [ours];
  const work = join(tmpdir(), `reblog-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${ours.key}`,
      'mcp-protocol-version': '2025-11-25',
    };
    // Check the answers once before measuring them.
    const listed = await post(ours.url, headers, LIST);
    const tools = JSON.parse(listed.text).result?.tools ?? [];
    if (listed.status !== 200 || !tools.some((t) => t.name === 'list_projects'))
      throw new Error(`tools/list answered ${listed.status}: ${listed.text.slice(0, 300)}`);
    const called = await post(ours.url, headers, CALL);
    const result = JSON.parse(called.text).result;
    if (called.status !== 200 || !result || result.isError || !result.structuredContent?.items?.length)
      throw new Error(`tools/call list_projects answered ${called.status}: ${called.text.slice(0, 300)}`);
    const bodyFile = join(work, 'tools-list.json');
    writeFileSync(bodyFile, listed.text);

    const raw = await startBenchServer(join(ROOT, 'bench/servers/raw-http.mjs'), { BENCH_BODY_FILE: bodyFile });
    children.push(raw);
    const targets = [
      { name: BASELINE, pid: raw.pid, url: raw.url, body: LIST },
      { name: 'ours tools/list', pid: ours.pid, url: ours.url, body: LIST, metricsOrigin: ours.origin },
      { name: 'ours tools/call list_projects', pid: ours.pid, url: ours.url, body: CALL, metricsOrigin: ours.origin },
    ];
    if (WITH_SDK) {
      const recipe = await startBenchServer(join(ROOT, 'bench/servers/sdk-stateless.mjs'));
      children.push(recipe);
      const check = await post(recipe.url, headers, CALL);
      if (check.status !== 200 || !check.text.includes('Demo blog')) throw new Error(`The SDK recipe answered ${check.status}: ${check.text.slice(0, 300)}`);
      targets.push({ name: SDK, pid: recipe.pid, url: recipe.url, body: CALL });
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
    console.log('Medians over rounds; the ratios are taken within each round. RSS is of the server process alone (not its PostgreSQL).\n');

    const verdicts = [];
    for (const row of rows.filter((r) => r.name.startsWith('ours'))) {
      verdicts.push({ target: `${row.name} ≥ ${TARGET_RATIO} × baseline`, value: +row.ratioToBaseline.toFixed(3), met: row.ratioToBaseline >= TARGET_RATIO });
      if (WITH_SDK)
        verdicts.push({ target: `${row.name} ≥ ${TARGET_VS_SDK} × SDK stateless`, value: +row.ratioToSdk.toFixed(1), met: row.ratioToSdk >= TARGET_VS_SDK });
    }
    for (const v of verdicts) console.log(`${v.met ? 'MET   ' : 'MISSED'}  ${v.target}: ${v.value}`);

    await ours.stop();
    children.shift();
    let profile;
    if (CPU_PROF) {
      const file = readdirSync(PROFILES).find((f) => f.endsWith('.cpuprofile'));
      if (file) {
        profile = { file: join('bench/results/profiles', file), top: summarizeProfile(join(PROFILES, file), 20) };
        console.log(`\nCPU profile of our server (${profile.file}), top self time:`);
        for (const f of profile.top) console.log(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
      }
    }

    const latest = join(RESULTS, 'latest.json');
    const all = existsSync(latest) ? JSON.parse(readFileSync(latest, 'utf8')) : {};
    all.protocol = {
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
      ...(profile ? { profile } : {}),
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(latest, JSON.stringify(all, null, 2) + '\n');
    console.log(`\nWritten to bench/results/latest.json`);
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
