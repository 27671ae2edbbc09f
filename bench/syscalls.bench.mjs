// What each request costs the kernel, counted rather than timed (bench/README.md, "System calls per
// request"): on a shared machine whose speed swings from one day to the next, a count does not. Our
// server and the bare NestJS floor (bench/servers/nest-floor.mjs) each answer BENCH_REQUESTS requests
// of the same method at BENCH_CONNECTIONS connections, after a warm-up, while `perf stat` counts the
// system calls, context switches and page faults of the server (every thread) and of its PostgreSQL
// (the postmaster and its backends). Ours: `tools/list` in a 2025-11-25 session (the server as
// `npm start` runs it), the echo `tools/call` in a session (the conformance entry point, as
// `npm run bench` measures it), and `tools/call list_projects`. Target: our server's reads and writes per
// request ≤ 1.25 × the floor's for the same method (an answer written in two pieces makes it 1.5, a
// round trip to PostgreSQL of its own per request 2); the other calls (the collector's futexes, epoll)
// are reported.
// Writes bench/results/latest.json (key "syscalls"); needs `perf` (Debian's linux-perf) and says so
// without it.
//
//   BENCH_REQUESTS=20000  BENCH_CONNECTIONS=50  BENCH_SKIP_BUILD=true
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run, startServer } from '../scripts/lib/server.mjs';
import { atCleanup, build, descendantPids, runMain, saveResult, startChild, table } from './lib/bench.mjs';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TARGET_VS_FLOOR = 1.25;
const CONFORMANCE_ENTRY = 'dist/conformance/test/conformance/main.js';
const LEGACY = '2025-11-25';
const EVENTS = ['raw_syscalls:sys_enter', 'syscalls:sys_enter_read', 'syscalls:sys_enter_write', 'syscalls:sys_enter_writev', 'syscalls:sys_enter_futex'];
const SOFTWARE = ['context-switches', 'page-faults'];
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const ECHO = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });
const PROJECTS = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

runMain(main);

async function main() {
  if (spawnSync('perf', ['stat', '-e', EVENTS[0], '--', 'true']).status !== 0) {
    console.log('perf (with tracepoints) is not available here: nothing measured (apt-get install linux-perf).');
    saveResult('syscalls', { skipped: 'perf not available' });
    return true;
  }
  await build();
  if (process.env.BENCH_SKIP_BUILD !== 'true') await run('npx', ['tsc', '-p', 'tsconfig.conformance.json']);
  console.log(`System calls per request: node ${process.version}, ${REQUESTS} requests per target at ${CONNECTIONS} connections.\n`);

  const ours = await started(startServer());
  const fixtures = await started(startServer({ entry: CONFORMANCE_ENTRY, env: { CONFORMANCE_FIXTURES: 'true' } }));
  const work = mkdtempSync(join(tmpdir(), 'reblog-bench-syscalls-'));
  atCleanup(async () => rmSync(work, { recursive: true, force: true }));
  const bodyFile = join(work, 'tools-list.json');
  writeFileSync(bodyFile, await (await post(ours.url, { ...HEADERS, authorization: `Bearer ${ours.key}` }, LIST)).text());
  const floor = await startChild([join(ROOT, 'bench/servers/nest-floor.mjs')], { BENCH_BODY_FILE: bodyFile, BENCH_TOKEN: ours.key }, /listening (\d+)/);
  const floorUrl = `http://127.0.0.1:${floor.match[1]}/mcp`;

  const auth = (server) => ({ ...HEADERS, authorization: `Bearer ${server.key}` });
  const targets = [
    { name: 'Nest floor tools/list', pid: floor.pid, url: floorUrl, headers: auth(ours), body: LIST },
    { name: 'Nest floor tools/call echo', pid: floor.pid, url: floorUrl, headers: auth(ours), body: ECHO },
    { name: 'ours tools/list 2025 (session)', floor: 'Nest floor tools/list', server: ours, body: LIST, session: true },
    { name: 'ours echo 2025 (session)', floor: 'Nest floor tools/call echo', server: fixtures, body: ECHO, session: true },
    { name: 'ours tools/call list_projects 2025', server: ours, body: PROJECTS },
  ];
  for (const t of targets.filter((t) => t.server)) {
    t.pid = t.server.pid;
    t.url = t.server.url;
    t.headers = { ...auth(t.server), 'mcp-protocol-version': LEGACY, ...(t.session ? await session(t.server) : {}) };
  }

  const results = {};
  for (const t of targets) {
    const res = await post(t.url, t.headers, t.body);
    const text = await res.text();
    if (res.status !== 200 || !/"result"/.test(text)) throw new Error(`${t.name} answered ${res.status}: ${text.slice(0, 300)}`);
    await autocannon({ url: t.url, method: 'POST', headers: t.headers, body: t.body, connections: CONNECTIONS, amount: Math.ceil(REQUESTS / 4) });
    // The database's processes as they are once warm (the pools' connections are open by now).
    const database = t.server ? descendantPids(t.pid) : [];
    const server = await counted([t.pid], join(work, 'server.csv'));
    const db = database.length ? await counted(database, join(work, 'database.csv')) : null;
    const load = await autocannon({ url: t.url, method: 'POST', headers: t.headers, body: t.body, connections: CONNECTIONS, amount: REQUESTS });
    // The last answers' activity entries are committed just after them.
    await new Promise((settle) => setTimeout(settle, 200));
    const counts = await server.stop();
    const dbCounts = db ? await db.stop() : null;
    const failed = load.non2xx + load.errors;
    if (failed) throw new Error(`${t.name}: ${failed} requests failed`);
    const per = (n) => +(n / load.requests.total).toFixed(3);
    results[t.name] = {
      requests: load.requests.total,
      syscalls: per(counts['raw_syscalls:sys_enter']),
      read: per(counts['syscalls:sys_enter_read']),
      write: per(counts['syscalls:sys_enter_write'] + counts['syscalls:sys_enter_writev']),
      futex: per(counts['syscalls:sys_enter_futex']),
      contextSwitches: per(counts['context-switches']),
      pageFaults: per(counts['page-faults']),
      dbSyscalls: dbCounts ? per(dbCounts['raw_syscalls:sys_enter']) : null,
      dbContextSwitches: dbCounts ? per(dbCounts['context-switches']) : null,
    };
  }

  const lines = targets.map(({ name, floor: base }) => {
    const r = results[name];
    const io = (x) => x.read + x.write;
    const ratio = base ? +(io(r) / io(results[base])).toFixed(2) : null;
    r.ioVsFloor = ratio;
    return [name, r.syscalls, r.read, r.write, r.futex, r.contextSwitches, r.pageFaults, r.dbSyscalls ?? '-', r.dbContextSwitches ?? '-', ratio ?? '-'];
  });
  console.log(
    table(
      ['per request', 'syscalls', 'read', 'write(v)', 'futex', 'ctx switches', 'page faults', 'DB syscalls', 'DB ctx switches', 'read + write × floor'],
      lines,
    ),
  );
  console.log('\nThe server: every thread of its process; DB: its PostgreSQL (postmaster and backends). Counts, so not a time.\n');

  const verdicts = targets
    .filter((t) => t.floor)
    .map((t) => ({
      target: `${t.name} reads and writes ≤ ${TARGET_VS_FLOOR} × the floor's`,
      value: results[t.name].ioVsFloor,
      met: results[t.name].ioVsFloor <= TARGET_VS_FLOOR,
    }));
  for (const v of verdicts) console.log(`${v.met ? 'MET   ' : 'MISSED'}  ${v.target}: ${v.value}`);
  saveResult('syscalls', { node: process.version, requests: REQUESTS, connections: CONNECTIONS, results, verdicts });
  return verdicts.every((v) => v.met);
}

/** A started server, stopped at the end. */
async function started(starting) {
  const server = await starting;
  atCleanup(() => server.stop());
  return server;
}

function post(url, headers, body) {
  return fetch(url, { method: 'POST', headers, body });
}

/** A 2025-11-25 session (initialize, then notifications/initialized); resolves to its headers. */
async function session(server) {
  const init = await post(
    server.url,
    { ...HEADERS, authorization: `Bearer ${server.key}` },
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
    }),
  );
  const id = init.headers.get('mcp-session-id');
  await init.text();
  if (!id) throw new Error(`initialize answered ${init.status} without a session`);
  const headers = { 'mcp-session-id': id };
  const ack = await post(
    server.url,
    { ...HEADERS, authorization: `Bearer ${server.key}`, 'mcp-protocol-version': LEGACY, ...headers },
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  );
  if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
  return headers;
}

/**
 * `perf stat` attached to `pids` (each with all its threads), writing to `file`. Resolves once perf has
 * attached to { stop() }, which ends it (SIGINT) and resolves to its counts by event name.
 */
async function counted(pids, file) {
  const perf = spawn('perf', ['stat', '-x', ',', '-o', file, '-e', [...EVENTS, ...SOFTWARE].join(','), '-p', pids.join(',')], { stdio: 'ignore' });
  const exited = new Promise((done) => perf.once('exit', done));
  atCleanup(async () => perf.kill('SIGINT'));
  // perf says nothing once it has attached (to every thread): give it a moment.
  await new Promise((settle) => setTimeout(settle, 500));
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
      const counts = {};
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const [value, , event] = line.split(',');
        if (event && /^\d+$/.test(value)) counts[event] = Number(value);
      }
      for (const event of [...EVENTS, ...SOFTWARE]) if (!(event in counts)) throw new Error(`perf counted no ${event} for ${pids.join(',')}`);
      return counts;
    },
  };
}
