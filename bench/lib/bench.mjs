// What the benches set up alike: the build, an embedded PostgreSQL of their own, the built server and
// the bench servers as child processes, and the cleanup of all of it (also on Ctrl-C). Builds on
// scripts/lib/server.mjs (the server with its own database and demo key, as `npm start` runs it).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { freePort, ROOT, run, START_ARGS } from '../../scripts/lib/server.mjs';

/** `npm run build`, unless BENCH_SKIP_BUILD=true (reuse dist/ as it is). */
export async function build() {
  if (process.env.BENCH_SKIP_BUILD !== 'true') await run('npm', ['run', 'build', '--silent']);
}

const cleanups = [];

/** Registers `fn` to run (last registered first) at {@link cleanup}, or when the bench is interrupted. */
export function atCleanup(fn) {
  if (!cleanups.length) for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => cleanup().then(() => process.exit(130)));
  cleanups.push(fn);
}

/** Runs what {@link atCleanup} registered, ignoring failures. */
export async function cleanup() {
  while (cleanups.length)
    await cleanups
      .pop()()
      .catch(() => undefined);
}

/** Runs `main`; cleans up, then exits 0 when it answered true, 1 when false or when it failed. */
export function runMain(main) {
  main()
    .then(async (ok) => {
      await cleanup();
      process.exit(ok ? 0 : 1);
    })
    .catch(async (err) => {
      console.error(err);
      await cleanup();
      process.exit(1);
    });
}

/**
 * A node child process (`args` after the node binary, from the repository root) that prints `pattern`
 * once ready. Resolves to { child, pid, match, output(), stop() } (stop: SIGTERM, then its exit), its
 * stop registered with {@link atCleanup}; rejects with its output if it exits first.
 */
export function startChild(args, env, pattern, { stderr = 'pipe' } = {}) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', stderr] });
    let out = '';
    let ready = false;
    const onExit = (code) => fail(new Error(`${args.join(' ')} exited (${code}) before it was ready:\n${out.slice(-3000)}`));
    child.once('exit', onExit);
    const onData = (chunk) => {
      out += chunk;
      const match = !ready && pattern.exec(out);
      if (!match) return;
      ready = true;
      child.removeListener('exit', onExit);
      const stop = () =>
        new Promise((exited) => (child.exitCode !== null || child.signalCode !== null ? exited() : (child.once('exit', exited), child.kill('SIGTERM'))));
      atCleanup(stop);
      done({ child, pid: child.pid, match, output: () => out, stop });
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr?.setEncoding('utf8').on('data', onData);
  });
}

/**
 * An embedded PostgreSQL of the bench's own (database "bench") in a temp folder named after `name`,
 * migrated, from the build in dist/. Resolves to { db, dir, stop() }; `stop` stops it and removes the
 * folder. `options` go to EmbeddedPostgres.start (settings, log).
 */
export async function startDatabase(name, options = {}) {
  const { EmbeddedPostgres } = await import(join(ROOT, 'dist/src/database/embedded-postgres.js'));
  const { migrate } = await import(join(ROOT, 'dist/src/database/migrate.js'));
  const dir = mkdtempSync(join(tmpdir(), `reblog-${name}-bench-`));
  // When run as root, the embedded PostgreSQL runs as the postgres user, which must enter this folder.
  chmodSync(dir, 0o755);
  let db;
  const stop = async () => {
    await db?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    db = await EmbeddedPostgres.start({ dir: join(dir, 'pg'), database: 'bench', ...options });
    await migrate(db.url);
  } catch (err) {
    await stop();
    throw err;
  }
  return { db, dir, stop };
}

/**
 * The built server as `npm start` runs it in production, on `database` (from {@link startDatabase},
 * migrated already), with `adminToken`, no demo tenant and no rate limit to speak of; `nodeArgs` go to
 * node before the entry point (e.g. `--cpu-prof`), `env` adds to (or overrides) its settings; several may
 * run on one database. Resolves to { origin, pid, stop() } once it is ready.
 */
export async function startProductionServer(database, adminToken, { nodeArgs = [], env = {} } = {}) {
  const port = await freePort();
  const dataDir = join(database.dir, `data-${port}`);
  mkdirSync(dataDir);
  const server = await startChild(
    [...START_ARGS.slice(0, -1), ...nodeArgs, START_ARGS.at(-1)],
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: database.db.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      REQUEST_STATE_SECRET: adminToken.padEnd(32, '0'),
      SEED_DEMO: 'false',
      MIGRATIONS_RUN: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '1000000',
      ...env,
    },
    /Reblog MCP ready/,
  );
  return { origin: `http://127.0.0.1:${port}`, pid: server.pid, stop: server.stop };
}

/**
 * CPU seconds (user + system) used so far by a process, from /proc (clock ticks of 10 ms); NaN when unknown.
 * With `reaped`, also that of its children that have exited and been waited for.
 */
export function cpuSeconds(pid, { reaped = false } = {}) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / 100;
  } catch {
    return NaN;
  }
}

/** The processes started under `pid`, at any depth (not `pid` itself): for our server, its embedded PostgreSQL. */
export function descendantPids(pid) {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      parents.set(Number(entry), Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const isUnder = (p) => {
    for (let up = parents.get(p); up !== undefined && up > 1; up = parents.get(up)) if (up === pid) return true;
    return false;
  };
  return [...parents.keys()].filter(isUnder);
}

/**
 * CPU seconds used so far by the processes started under `pid` (not `pid` itself): for our server, its
 * embedded PostgreSQL's postmaster and backends. A backend that has exited still counts: the postmaster
 * waits for its backends, and their CPU is then added to its children's (otherwise a backend closed
 * during a measurement would take its whole CPU out of it).
 */
export function descendantsCpuSeconds(pid) {
  return descendantPids(pid).reduce((total, p) => total + (cpuSeconds(p, { reaped: true }) || 0), 0);
}

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function table(head, lines) {
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

/** The median of the numbers among `values` (null when there are none). */
export function median(values) {
  const v = values.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

/**
 * Sets `key` of bench/results/latest.json (the other benches' keys kept) to `value`, and says so.
 * `BENCH_RESULTS_FILE` names another file (bench/smoke.mjs: a smoke run leaves the figures alone).
 */
export function saveResult(key, value) {
  const latest = process.env.BENCH_RESULTS_FILE || join(ROOT, 'bench/results/latest.json');
  const all = existsSync(latest) ? JSON.parse(readFileSync(latest, 'utf8')) : {};
  all[key] = value;
  mkdirSync(dirname(latest), { recursive: true });
  writeFileSync(latest, JSON.stringify(all, null, 2) + '\n');
  console.log(`Written to ${relative(ROOT, latest)}`);
}
