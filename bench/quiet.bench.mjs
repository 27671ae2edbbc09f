// A call after a quiet spell (bench/README.md, "After a quiet spell"). An MCP client calls a tool now and
// then, not thousands of times a second: the call it makes after the server sat unused is the common one.
// Three servers, each called with `fetch` as a client would, `tools/call list_projects`:
//   - ours, the built server as `npm start` runs it (its own embedded PostgreSQL; ROLE=BENCH_ROLE),
//   - the same with pools that keep no connection when unused (bench/servers/cold-pools.mjs, preloaded),
//   - the bare node:http baseline answering the same bytes (bench/servers/raw-http.mjs): what the
//     machine itself costs after a quiet spell (a sleeping process woken, a new TCP connection).
// Each round waits BENCH_QUIET seconds (12: past pg-pool's 10 s idle timeout, the 3 s principal cache and
// undici's 4 s keep-alive), then calls each server once, in turns that rotate between rounds. Reports the
// warm call (median of 21 back to back) and the first call after the quiet spell (median of the rounds),
// and the ratios within each round. No target: reported so that a regression shows. Writes
// bench/results/latest.json (key "quiet").
//
//   BENCH_ROUNDS=6  BENCH_QUIET=12  BENCH_ROLE=all  BENCH_SKIP_BUILD=true
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { ROOT, startServer } from '../scripts/lib/server.mjs';
import { atCleanup, build, median, runMain, saveResult, startChild } from './lib/bench.mjs';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 6));
const QUIET = Number(process.env.BENCH_QUIET ?? 12);
const ROLE = process.env.BENCH_ROLE ?? 'all';
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

runMain(main);

async function main() {
  await build();
  const start = async (name, nodeArgs = []) => {
    const server = await startServer({ env: { ROLE }, nodeArgs });
    atCleanup(() => server.stop());
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${server.key}`,
      'mcp-protocol-version': '2025-11-25',
    };
    return { name, url: server.url, headers };
  };
  const ours = await start('ours');
  const cold = await start('ours, pools keep no connection', ['--import', join(ROOT, 'bench/servers/cold-pools.mjs')]);
  const dir = mkdtempSync(join(tmpdir(), 'reblog-quiet-bench-'));
  atCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  const bodyFile = join(dir, 'answer.json');
  await call(ours);
  writeFileSync(bodyFile, ours.answer);
  const raw = await startChild([join(ROOT, 'bench/servers/raw-http.mjs')], { BENCH_BODY_FILE: bodyFile }, /listening (\d+)/, { stderr: 'inherit' });
  const servers = [ours, cold, { name: 'bare node:http', url: `http://127.0.0.1:${raw.match[1]}/mcp`, headers: { 'content-type': 'application/json' } }];

  console.log(
    `Quiet-spell bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)}, ROLE=${ROLE}, ` +
      `${ROUNDS} rounds of ${QUIET} s quiet.`,
  );
  for (const s of servers) {
    // Many calls at once first, so that the pools open more connections than they keep.
    for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 30 }, () => call(s)));
    const warm = [];
    for (let i = 0; i < 21; i++) warm.push(await call(s));
    s.warm = median(warm);
    s.afterQuiet = [];
  }
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    await new Promise((resolve) => setTimeout(resolve, QUIET * 1000));
    const round = {};
    for (let j = 0; j < servers.length; j++) {
      const s = servers[(i + j) % servers.length];
      round[s.name] = await call(s);
      s.afterQuiet.push(round[s.name]);
    }
    rounds.push(round);
    console.log(`  round ${i + 1}: ${servers.map((s) => `${s.name} ${round[s.name].toFixed(1)} ms`).join(', ')}`);
  }

  const rows = servers.map((s) => ({ name: s.name, warmMs: +s.warm.toFixed(2), afterQuietMs: +median(s.afterQuiet).toFixed(2) }));
  console.log('');
  console.table(Object.fromEntries(rows.map(({ name, ...rest }) => [name, rest])));
  const [a, c, r] = servers.map((s) => s.name);
  const ratios = {
    oursAfterQuietOverWarm: median(rounds.map((round) => round[a] / ours.warm)),
    oursOverColdPools: median(rounds.map((round) => round[a] / round[c])),
    oursOverBareHttp: median(rounds.map((round) => round[a] / round[r])),
    coldPoolsOverBareHttp: median(rounds.map((round) => round[c] / round[r])),
  };
  for (const [name, value] of Object.entries(ratios)) console.log(`  ${name}: ${value.toFixed(2)}`);
  saveResult('quiet', {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    role: ROLE,
    rounds: ROUNDS,
    quietSeconds: QUIET,
    rows,
    ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, +v.toFixed(3)])),
  });
  return true;
}

/** One call, in ms; keeps the answer's bytes on the server's entry. */
async function call(server) {
  const started = performance.now();
  const res = await fetch(server.url, { method: 'POST', headers: server.headers, body: CALL });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200 || !text.includes('"result"')) throw new Error(`${server.name}: ${res.status} ${text.slice(0, 300)}`);
  server.answer ??= text;
  return ms;
}
