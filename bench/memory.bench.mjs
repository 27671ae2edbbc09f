// Memory (bench/README.md#targets): RSS of one instance after 100k requests ≤ 250 MB, and not growing
// between the two 50k halves by more than 10%. One built server as `npm start` runs it (its own
// embedded PostgreSQL, activity log on, rate limit raised), driven by autocannon at 50 connections
// with the three kinds of request a client sends most: tools/list, tools/call list_projects and
// tools/call list_articles. RSS is the server process's own (not its PostgreSQL), read from /proc
// after each half once the load has stopped, and the live V8 heap after a forced full collection
// (bench/servers/gc-on-signal.mjs, preloaded), which shows a leak where RSS is blurred by garbage.
// Prints a table, writes bench/results/latest.json (key "memory") and exits 1 when a target is missed.
//
//   BENCH_REQUESTS=100000   requests in all (two halves)
//   BENCH_CONNECTIONS=50
//   BENCH_SKIP_BUILD=true   reuse dist/ as it is
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { startServer } from '../scripts/lib/server.mjs';
import { build, saveResult } from './lib/bench.mjs';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TARGET_RSS_MB = 250;
const TARGET_GROWTH = 0.1;

function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key) => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]) / 1024);
  return { rssMb: mb('VmRSS'), peakMb: mb('VmHWM') };
}

async function half(server, amount) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${server.key}` };
  const projects = await callTool(server, headers, 'list_projects', {});
  const project = projects.items[0].id;
  const bodies = [
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_projects', arguments: {} } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_articles', arguments: { project_id: project } } },
  ].map((b) => JSON.stringify(b));
  const r = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    amount,
    requests: bodies.map((body) => ({ method: 'POST', headers, body })),
  });
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts — the figures would be meaningless.`);
  // Let timers and the activity log settle: RSS is read with no request in flight, as the process left it.
  await new Promise((done) => setTimeout(done, 1_000));
  const rss = memory(server.pid);
  // Then the live heap, after a full collection (bench/servers/gc-on-signal.mjs): what the process really holds on to.
  process.kill(server.pid, 'SIGUSR2');
  await new Promise((done) => setTimeout(done, 500));
  return { requests: r.requests.total, rps: Math.round(r.requests.average), ...rss, liveHeapMb: await heapUsed(server) };
}

/** The V8 heap in use, in MB (from /metrics). */
async function heapUsed(server) {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const bytes = Number(/^reblog_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]);
  return Number.isFinite(bytes) ? Math.round(bytes / 1024 / 1024) : null;
}

async function callTool(server, headers, name, args) {
  const res = await fetch(server.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name, arguments: args } }),
  });
  const json = await res.json();
  return json.result.structuredContent;
}

async function main() {
  await build();
  console.log(
    `Memory bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${CONNECTIONS} connections, ${REQUESTS} requests.\n`,
  );
  const server = await startServer({ nodeArgs: ['--expose-gc', '--import', './bench/servers/gc-on-signal.mjs'] });
  try {
    const booted = memory(server.pid);
    console.log(`after boot: RSS ${booted.rssMb} MB`);
    const first = await half(server, Math.floor(REQUESTS / 2));
    console.log(`after ${first.requests} requests: RSS ${first.rssMb} MB (peak ${first.peakMb} MB), live V8 heap ${first.liveHeapMb} MB, ${first.rps} req/s`);
    const second = await half(server, Math.ceil(REQUESTS / 2));
    console.log(
      `after ${first.requests + second.requests} requests: RSS ${second.rssMb} MB (peak ${second.peakMb} MB), live V8 heap ${second.liveHeapMb} MB, ${second.rps} req/s`,
    );
    const growth = (second.rssMb - first.rssMb) / first.rssMb;
    const heapGrowth = (second.liveHeapMb - first.liveHeapMb) / first.liveHeapMb;
    console.log(`live heap growth between the halves: ${(heapGrowth * 100).toFixed(1)}% (no target; a leak shows here first)`);
    const result = {
      at: new Date().toISOString(),
      loadAverage: loadavg(),
      bootRssMb: booted.rssMb,
      first,
      second,
      growth: +growth.toFixed(3),
      liveHeapGrowth: +heapGrowth.toFixed(3),
    };

    const checks = [
      [`RSS after ${first.requests + second.requests} requests ≤ ${TARGET_RSS_MB} MB`, second.rssMb <= TARGET_RSS_MB, `${second.rssMb} MB`],
      [`growth between the halves ≤ ${TARGET_GROWTH * 100}%`, growth <= TARGET_GROWTH, `${(growth * 100).toFixed(1)}%`],
    ];
    console.log('');
    for (const [name, ok, value] of checks) console.log(`${ok ? 'MET   ' : 'MISSED'}  ${name}: ${value}`);
    console.log('');
    saveResult('memory', result);
    if (checks.some(([, ok]) => !ok)) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

await main();
