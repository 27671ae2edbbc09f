// Catalogue at 1,000 projects (bench/README.md#targets: `tools/list` for a credential reaching 1,000
// projects ≤ 2 × the time for one reaching 1). One built server as `npm start` runs it (its own embedded
// PostgreSQL, rate limit raised); through the admin API, an account with BENCH_PROJECTS projects and two
// API keys with every scope, one reaching all of them as owner and one reaching the first. Interleaved
// rounds of `tools/list` (2025-11-25, no session) with each key at 50 connections; the ratio is taken
// within each round (the 1-project key's requests/s over the other's: how many times longer an answer
// takes) and the median is checked. A key's principal is cached for 3 s (src/auth/principal.resolver.ts),
// so each round also reloads the 1,000 projects and rebuilds that catalogue once or twice, as it would be
// in production. Prints a table, writes bench/results/latest.json (key "catalogue"), exits 1 when missed.
//
//   BENCH_PROJECTS=1000  BENCH_ROUNDS=3  BENCH_DURATION=5  BENCH_WARMUP=2  BENCH_CONNECTIONS=50
//   BENCH_SKIP_BUILD=true  reuse dist/ as it is
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { startServer } from '../scripts/lib/server.mjs';
import { atCleanup, build, cpuSeconds, median, runMain, saveResult } from './lib/bench.mjs';

const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 1000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TARGET_RATIO = 2;
const ADMIN_TOKEN = 'bench-admin-' + randomBytes(12).toString('hex');
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

runMain(main);

async function main() {
  await build();
  const server = await startServer({ env: { ADMIN_TOKEN } });
  atCleanup(() => server.stop());
  const admin = (method, path, body) =>
    fetch(`${server.origin}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => {
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    });

  const account = await admin('POST', '/accounts', { name: 'Catalogue bench', owner_email: 'catalogue-bench@example.com' });
  const projects = [];
  for (let i = 0; i < PROJECTS; i += 20)
    projects.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, PROJECTS - i) }, (_, j) => admin('POST', `/accounts/${account.id}/projects`, { name: `Project ${i + j + 1}` })),
      )),
    );
  const key = async (reach) =>
    (
      await admin('POST', `/accounts/${account.id}/api-keys`, {
        name: `${reach.length} project(s)`,
        scopes: ['read', 'write', 'generate', 'delete'],
        projects: reach.map((p) => ({ project_id: p.id, role: 'owner' })),
      })
    ).key;
  const targets = [
    { name: `tools/list, key reaching 1 project`, key: await key(projects.slice(0, 1)) },
    { name: `tools/list, key reaching ${PROJECTS} projects`, key: await key(projects) },
  ];
  for (const t of targets) {
    t.headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${t.key}`,
      'mcp-protocol-version': '2025-11-25',
    };
    const res = await fetch(server.url, { method: 'POST', headers: t.headers, body: LIST });
    const text = await res.text();
    if (!res.ok) throw new Error(`${t.name}: ${res.status} ${text.slice(0, 500)}`);
    t.tools = JSON.parse(text).result.tools.length;
    t.bytes = Buffer.byteLength(text);
  }

  console.log(
    `Catalogue bench: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)}, ${PROJECTS} projects, ` +
      `${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION} s.`,
  );
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const round = {};
    for (const t of targets) {
      const opts = { url: server.url, method: 'POST', headers: t.headers, body: LIST, connections: CONNECTIONS };
      if (i === 0 && WARMUP > 0) await autocannon({ ...opts, duration: WARMUP });
      const cpu0 = cpuSeconds(server.pid);
      const r = await autocannon({ ...opts, duration: DURATION });
      if (r.non2xx || r.errors || r.timeouts) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
      round[t.name] = { rps: r.requests.average, p99: r.latency.p99, cpuMsPerRequest: (1000 * (cpuSeconds(server.pid) - cpu0)) / r.requests.total };
      console.log(`  round ${i + 1}, ${t.name}: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms`);
    }
    rounds.push(round);
  }

  const [one, many] = targets;
  const ratio = median(rounds.map((r) => r[one.name].rps / r[many.name].rps));
  const rows = targets.map((t) => ({
    name: t.name,
    tools: t.tools,
    bytes: t.bytes,
    rps: Math.round(median(rounds.map((r) => r[t.name].rps))),
    p99: median(rounds.map((r) => r[t.name].p99)),
    cpuMsPerRequest: +median(rounds.map((r) => r[t.name].cpuMsPerRequest)).toFixed(3),
  }));
  console.log('');
  console.table(Object.fromEntries(rows.map(({ name, ...rest }) => [name, rest])));
  const met = ratio <= TARGET_RATIO;
  console.log(`${met ? 'MET   ' : 'MISSED'}  ${PROJECTS} projects / 1 project, time per tools/list ≤ ${TARGET_RATIO}: ${ratio.toFixed(3)}`);
  saveResult('catalogue', {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    projects: PROJECTS,
    connections: CONNECTIONS,
    rounds: ROUNDS,
    durationSeconds: DURATION,
    rows,
    ratio: +ratio.toFixed(3),
    met,
  });
  return met;
}
