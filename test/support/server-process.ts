import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { freePort } from './net.js';
import type { TestApp } from './test-app.js';

const ROOT = resolve(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

/**
 * Compiles the server once per test run (`tsc -p tsconfig.build.json` into dist/), whichever test
 * file asks first; the others wait for it. The run is identified by its database URL.
 */
export async function ensureBuilt(): Promise<void> {
  const run = createHash('sha256').update(process.env.DATABASE_URL ?? '').digest('hex').slice(0, 16);
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
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
    if (!existsSync(MAIN)) throw new Error(`The build did not produce ${MAIN}:\n${tsc.stdout}${tsc.stderr}`);
    // Type errors are the typecheck step's to report; the emitted JavaScript is what these tests run.
    if (tsc.status !== 0) process.stderr.write(`tsc reported errors (the server was still emitted):\n${tsc.stdout.slice(0, 4000)}\n`);
    writeFileSync(done, new Date().toISOString());
    return;
  }
  for (let waited = 0; !existsSync(done); waited += 200) {
    if (waited > 300_000) throw new Error(`Waited 5 minutes for another test file to build the server (${lock}).`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A real `node dist/src/main.js` process. */
export interface ServerProcess extends TestApp {
  child: ChildProcess;
  port: number;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal) once it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the built server with `env` on a free loopback port (or `PORT` given) and waits until it
 * prints that it is ready. `DATABASE_URL` defaults to the test run's database.
 */
export async function startServer(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ServerProcess> {
  await ensureBuilt();
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const adminToken = env.ADMIN_TOKEN ?? 'test-admin-' + randomBytes(12).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'reblog-proc-'));
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      DATABASE_URL: process.env.DATABASE_URL,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      ...env,
      PORT: String(port),
      ADMIN_TOKEN: adminToken,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => {
      rmSync(dataDir, { recursive: true, force: true });
      done({ code, signal });
    }),
  );
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`The server did not get ready in ${timeoutMs} ms:\n${out.slice(-3000)}`)), timeoutMs);
    const check = () => {
      if (!out.includes('Reblog MCP ready')) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      ready();
    };
    child.stdout!.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      fail(new Error(`The server exited (${code ?? signal}) before it was ready:\n${out.slice(-3000)}`));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return {
    app: undefined as never,
    config: undefined as never,
    baseUrl,
    adminToken,
    http: request(baseUrl),
    close: async () => {
      await stop('SIGTERM');
    },
    child,
    port,
    output: () => out,
    exited,
    stop,
  };
}
