// What Express's prototype change costs per request: a bare Express 5 app answering POST /mcp with fixed
// JSON (bench/servers/express-bare.mjs), its HTTP server made as Express's guide makes it (each request
// and response given Express's prototypes by `app.handle`) and as the product makes it
// (src/common/express-server.ts: made with them). Interleaved rounds at 50 connections, each server in its
// own process on the Node running this bench; prints requests/s and CPU µs per request of both and the
// ratios, writes bench/results/latest.json (key "express"). Reported, not asserted.
//
//   BENCH_ROUNDS=3 BENCH_DURATION=4 BENCH_CONNECTIONS=50
//   BENCH_SKIP_BUILD=true  reuse dist/ as it is
import autocannon from 'autocannon';
import { cpus, loadavg } from 'node:os';
import { build, cpuSeconds, median, runMain, saveResult, startChild } from './lib/bench.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BODY = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

async function main() {
  await build();
  const servers = [];
  for (const [name, made] of [
    ['prototypes set per request (Express default)', 'false'],
    ['made with the prototypes (the product)', 'true'],
  ]) {
    const child = await startChild(['bench/servers/express-bare.mjs'], { BENCH_MADE: made }, /listening (\d+)/);
    servers.push({ name, pid: child.pid, url: `http://127.0.0.1:${child.match[1]}/mcp`, rounds: [] });
  }
  const load = (url, duration) =>
    autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY, connections: CONNECTIONS, duration });
  for (const s of servers) await load(s.url, 1);
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of servers) {
      const cpu0 = cpuSeconds(s.pid);
      const result = await load(s.url, DURATION);
      if (result.non2xx || result.errors) throw new Error(`${s.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      s.rounds.push({ rps: result.requests.average, cpuUs: (1e6 * (cpuSeconds(s.pid) - cpu0)) / result.requests.total });
    }
  }
  const [changed, made] = servers.map((s) => ({ name: s.name, rps: median(s.rounds.map((r) => r.rps)), cpuUs: median(s.rounds.map((r) => r.cpuUs)) }));
  console.log(
    `Express prototypes, node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)}, ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections:`,
  );
  for (const s of [changed, made])
    console.log(`  ${s.name.padEnd(46)} ${String(Math.round(s.rps)).padStart(7)} req/s ${s.cpuUs.toFixed(1).padStart(7)} µs CPU per request`);
  const ratios = { rps: made.rps / changed.rps, cpu: changed.cpuUs / made.cpuUs };
  console.log(`  made / set per request: ${ratios.rps.toFixed(2)} × the requests/s, ${ratios.cpu.toFixed(2)} × less CPU per request`);

  saveResult('express', {
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    rounds: ROUNDS,
    duration: DURATION,
    connections: CONNECTIONS,
    changed,
    made,
    ratios,
  });
  return true;
}

runMain(main);
