import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { freePort } from '../../src/common/net.js';
import type { TestApp } from './test-app.js';

const ROOT = resolve(__dirname, '..', '..');
/** The built server, as `npm start` runs it. */
export const MAIN = join(ROOT, 'dist', 'src', 'main.js');
// Every variable the server reads: a child gets only the ones its test gives it (DATABASE_URL above all).
const CONFIG_VARS = [
  'NODE_ENV',
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATABASE_URL',
  'DATA_DIR',
  'ADMIN_TOKEN',
  'ALLOWED_ORIGINS',
  'RATE_LIMIT_PER_SECOND',
  'RATE_LIMIT_MAX_WAIT_MS',
  'REDIS_URL',
  'SYNC_BUDGET_MS',
  'SYNC_BUDGET_SILENT_MS',
  'PROGRESS_HEARTBEAT_MS',
  'LOCAL_PROVIDER_DELAY_MS',
  'ALLOWED_HOSTS',
  'ROLE',
  'WRITER_PROVIDER',
  'IMAGE_PROVIDER',
  'LOG_LEVEL',
  'MIGRATIONS_RUN',
  'SEED_DEMO',
  'SHUTDOWN_GRACE_MS',
  'SHUTDOWN_TIMEOUT_MS',
  'SESSION_IDLE_TTL_S',
  'JOBS_MAX_QUEUED_PER_ACCOUNT',
  'JOBS_MAX_RUNNING_PER_ACCOUNT',
];

/** How the one build of this test run went. */
export interface Build {
  /** tsc's exit status: 0 when the sources type-check. */
  status: number;
  output: string;
}

/**
 * Compiles the server once per test run (`tsc -p tsconfig.build.json` into dist/, as `npm run build`),
 * whichever test file asks first; the others wait for it, so no file rewrites dist/ under a server
 * another one runs. The run is the one jest's global setup named (its database URL, unless set).
 */
export async function ensureBuilt(): Promise<Build> {
  const run = createHash('sha256')
    .update(process.env.REBLOG_TEST_RUN ?? process.env.DATABASE_URL ?? '')
    .digest('hex')
    .slice(0, 16);
  const lock = join(tmpdir(), `reblog-build-${run}`);
  const done = join(lock, 'done');
  let owner = false;
  try {
    mkdirSync(lock);
    owner = true;
  } catch {
    // Another test file of this run builds it.
  }
  if (owner) {
    // Locks of earlier runs (jest gives no hook at the very end of a run to remove this one).
    for (const old of readdirSync(tmpdir()).filter((f) => f.startsWith('reblog-build-'))) {
      const path = join(tmpdir(), old);
      if (path !== lock && Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true });
    }
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (!existsSync(MAIN)) throw new Error(`The build did not produce ${MAIN}:\n${tsc.stdout}${tsc.stderr}`);
    // Type errors are the typecheck step's (and the boot test's) to report; the emitted JavaScript is what these tests run.
    if (tsc.status !== 0) process.stderr.write(`tsc reported errors (the server was still emitted):\n${tsc.stdout.slice(0, 4000)}\n`);
    const build: Build = { status: tsc.status ?? 1, output: `${tsc.stdout}${tsc.stderr}` };
    writeFileSync(done, JSON.stringify(build));
    return build;
  }
  for (let waited = 0; !existsSync(done); waited += 200) {
    if (waited > 300_000) throw new Error(`Waited 5 minutes for another test file to build the server (${lock}).`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return JSON.parse(readFileSync(done, 'utf8')) as Build;
}

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A `node dist/src/main.js` process, and what it printed. */
export interface SpawnedServer {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once it has exited and its output is all read. */
  exited: Promise<Exit>;
  /** Resolves with the first match of `pattern` in its output; fails when it exits or `timeoutMs` passes first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` (unless it has exited) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const running = new Set<ChildProcess>();

/**
 * Spawns the built server (see {@link ensureBuilt}) with `env` and nothing of the test run's
 * configuration: `NODE_ENV=development` unless `env` says otherwise, no other setting given.
 */
export function spawnServer(env: Record<string, string>): SpawnedServer {
  const base = { ...process.env };
  for (const name of CONFIG_VARS) delete base[name];
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: { ...base, NODE_ENV: 'development', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  // 'close', not 'exit': by then every byte it printed has been read.
  const exited = new Promise<Exit>((done) => child.once('close', (code, signal) => done({ code, signal })));
  void exited.then(() => running.delete(child));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<RegExpMatchArray>((done, fail) => {
      const check = () => {
        const match = output.match(pattern);
        if (!match) return;
        cleanup();
        done(match);
      };
      const timer = setTimeout(() => {
        cleanup();
        fail(new Error(`Timed out waiting for ${pattern}; output so far:\n${output.slice(-3000)}`));
      }, timeoutMs);
      let gone = false;
      void exited.then(() => {
        if (gone) return;
        check();
        if (gone) return;
        cleanup();
        fail(new Error(`The server exited before printing ${pattern}; output:\n${output.slice(-3000)}`));
      });
      const cleanup = () => {
        gone = true;
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return { child, output: () => output, exited, waitFor, stop };
}

/** Kills (SIGKILL) every server process a test file left running. */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map((child) => {
      const closed = new Promise((done) => child.once('close', done));
      child.kill('SIGKILL');
      return closed;
    }),
  );
}

/** A built server started by {@link startServer}, reachable as a test app. */
export interface ServerProcess extends TestApp, SpawnedServer {
  port: number;
}

/**
 * Starts the built server with `env` on a free loopback port (or `PORT` given), a temp DATA_DIR and
 * no demo tenant, and waits until it prints that it is ready. `DATABASE_URL` defaults to the test
 * run's database.
 */
export async function startServer(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ServerProcess> {
  await ensureBuilt();
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const adminToken = env.ADMIN_TOKEN ?? 'test-admin-' + randomBytes(12).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'reblog-proc-'));
  const server = spawnServer({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL!,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    ...env,
    PORT: String(port),
    ADMIN_TOKEN: adminToken,
  });
  void server.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  await server.waitFor(/Reblog MCP ready/, timeoutMs);
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    ...server,
    app: undefined as never,
    config: undefined as never,
    baseUrl,
    adminToken,
    http: request(baseUrl),
    close: async () => {
      await server.stop('SIGTERM');
    },
    port,
  };
}
