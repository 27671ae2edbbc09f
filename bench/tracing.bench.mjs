// Tracing cost (README.md#tracing): in one run, the same server build three times — tracing absent (the
// baseline: bench/servers/tracing-absent.mjs, preloaded, rewrites every tracing site of the built code into
// the plain call, as if tracing had never been written), tracing off (no OTEL_* variable: no SDK loaded,
// the server as shipped) and on at 100% sampling (OTEL_TRACES_SAMPLER=always_on, every span and the
// metrics exported over OTLP/HTTP to a sink in this process) — measured in interleaved rounds on
// tools/call list_projects (a server span, its SQL child spans, the operation metric). Prints the
// medians of requests/s (at saturation) and CPU ms per request (at a fixed rate, BENCH_RATE), and writes
// bench/results/latest.json (key "tracing").
//
// Targets, each on the median over rounds of the ratio within a round: tracing off costs ≤ 2% (off /
// absent ≥ 0.98) and tracing on ≤ 15% (on / off ≥ 0.85). A ratio is the CPU per request of the baseline
// over that of the target (the steadier figure on a shared machine: it decides) and, beside it, the
// requests/s of the target over the baseline's.
//
//   BENCH_ROUNDS=3  BENCH_DURATION=5  BENCH_WARMUP=2  BENCH_CONNECTIONS=50  BENCH_PAUSE=2  BENCH_RATE=250  BENCH_SKIP_BUILD=false
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT, startServer } from '../scripts/lib/server.mjs';
import { build, cpuSeconds, median, saveResult } from './lib/bench.mjs';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Seconds of quiet before each measurement: the previous target's database settles (its commits, its autovacuum). */
const PAUSE = Number(process.env.BENCH_PAUSE ?? 2);
/** The fixed rate (req/s) at which CPU per request is measured: below what every target serves on a busy machine. */
const RATE = Number(process.env.BENCH_RATE ?? 250);
const TARGET_ON = 0.85;
const TARGET_OFF = 0.98;
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

/** An OTLP/HTTP sink: reads and counts every export, answers 200. */
async function startSink() {
  const received = { traces: 0, metrics: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (c) => (received.bytes += c.length));
    req.on('end', () => {
      if (req.url === '/v1/traces') received.traces++;
      else if (req.url === '/v1/metrics') received.metrics++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => new Promise((r) => server.close(r)) };
}

/**
 * One target in one round: requests/s and latency at saturation (CONNECTIONS connections), then CPU ms per
 * request at a fixed rate (RATE req/s) that every target keeps up with, so that all of them batch their
 * commits and wake up alike and the CPU per request compares the code, not how busy the machine was.
 */
async function measure(target, warm) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${target.server.key}` };
  const run = (duration, more = {}) => autocannon({ url: target.server.url, method: 'POST', headers, body: CALL, connections: CONNECTIONS, duration, ...more });
  const check = (r) => {
    if (r.non2xx || r.errors || r.timeouts) throw new Error(`${target.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts.`);
    return r;
  };
  if (warm && WARMUP > 0) await run(WARMUP);
  await sleep(PAUSE * 1000);
  const r = check(await run(DURATION));
  await sleep(PAUSE * 1000);
  const cpuBefore = cpuSeconds(target.server.pid);
  const paced = check(await run(DURATION, { connections: 10, overallRate: RATE }));
  const cpu = cpuSeconds(target.server.pid) - cpuBefore;
  const result = {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuMsPerRequest: paced.requests.total ? +((1000 * cpu) / paced.requests.total).toFixed(3) : null,
  };
  console.log(`  ${target.name}: ${result.rps} req/s; at ${RATE} req/s ${result.cpuMsPerRequest} CPU ms/req`);
  return result;
}

async function main() {
  await build();
  console.log(
    `Tracing bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION} s. Shared machine: compare the ratio, not absolutes.\n`,
  );
  const sink = await startSink();
  const children = [];
  try {
    const plain = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_METRICS_EXPORTER: '' };
    const absent = await startServer({ env: plain, nodeArgs: ['--import', join(ROOT, 'bench/servers/tracing-absent.mjs')] });
    children.push(absent);
    const off = await startServer({ env: plain });
    children.push(off);
    const on = await startServer({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_TRACES_SAMPLER: 'always_on',
        OTEL_METRIC_EXPORT_INTERVAL: '5000',
        OTEL_SERVICE_NAME: 'reblog-bench',
      },
    });
    children.push(on);
    const targets = [
      { name: 'tracing absent (baseline)', server: absent },
      { name: 'tracing off', server: off },
      { name: 'tracing on (100% sampled)', server: on },
    ];
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      console.log(`round ${i + 1}/${ROUNDS} (load average ${loadavg()[0].toFixed(1)})`);
      const round = {};
      // Rotate the order so no target always runs first, on a warmer or a quieter machine.
      for (const target of [...targets.slice(i % 3), ...targets.slice(0, i % 3)]) round[target.name] = await measure(target, i === 0);
      rounds.push(round);
    }
    const rows = targets.map((t) => ({
      name: t.name,
      rps: Math.round(median(rounds.map((r) => r[t.name].rps))),
      p50: median(rounds.map((r) => r[t.name].p50)),
      p99: median(rounds.map((r) => r[t.name].p99)),
      cpuMsPerRequest: +median(rounds.map((r) => r[t.name].cpuMsPerRequest)).toFixed(3),
    }));
    console.log('');
    for (const row of rows)
      console.log(`${row.name.padEnd(28)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  ${row.cpuMsPerRequest} CPU ms/req`);
    if (!sink.received.traces) throw new Error('The sink received no trace export: tracing was not on.');
    console.log(
      `\nThe sink received ${sink.received.traces} trace and ${sink.received.metrics} metric exports (${Math.round(sink.received.bytes / 1024)} KiB).\n`,
    );
    /** The target's ratio to its baseline, within each round, then the median: by CPU per request (decides) and by requests/s. */
    const compare = (target, baseline, least, label) => {
      const cpu = median(rounds.map((r) => r[baseline.name].cpuMsPerRequest / r[target.name].cpuMsPerRequest));
      const rps = median(rounds.map((r) => r[target.name].rps / r[baseline.name].rps));
      const verdict = { target: `${label} ≥ ${least}`, cpuRatio: +cpu.toFixed(3), rpsRatio: +rps.toFixed(3), met: cpu >= least };
      console.log(
        `${verdict.met ? 'MET   ' : 'MISSED'}  ${verdict.target}: ${verdict.cpuRatio} by CPU per request (${baseline.name} ÷ ${target.name}), ${verdict.rpsRatio} by requests/s`,
      );
      return verdict;
    };
    const verdicts = [
      compare(targets[1], targets[0], TARGET_OFF, 'tracing off / tracing absent'),
      compare(targets[2], targets[1], TARGET_ON, 'tracing on / tracing off'),
    ];

    saveResult('tracing', {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadAverage: loadavg(),
      connections: CONNECTIONS,
      rounds: ROUNDS,
      durationSeconds: DURATION,
      rows,
      verdicts,
    });
    process.exitCode = verdicts.every((v) => v.met) ? 0 : 1;
  } finally {
    for (const child of children) await child.stop().catch(() => undefined);
    await sink.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 2;
});
