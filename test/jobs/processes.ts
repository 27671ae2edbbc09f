import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** The built server, as `npm start` runs it: `node dist/src/main.js` in its own process. */
const ROOT = resolve(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
// Every variable the server reads: the child gets only the ones a test gives it.
const CONFIG_VARS = [
  'NODE_ENV', 'PORT', 'HOST', 'PUBLIC_URL', 'DATABASE_URL', 'DATA_DIR', 'ADMIN_TOKEN', 'ALLOWED_ORIGINS', 'RATE_LIMIT_PER_SECOND', 'REDIS_URL',
  'SYNC_BUDGET_MS', 'LOCAL_PROVIDER_DELAY_MS', 'ALLOWED_HOSTS', 'ROLE', 'WRITER_PROVIDER', 'IMAGE_PROVIDER', 'LOG_LEVEL', 'MIGRATIONS_RUN', 'SEED_DEMO',
  'SHUTDOWN_GRACE_MS', 'SHUTDOWN_TIMEOUT_MS', 'JOBS_MAX_QUEUED_PER_ACCOUNT', 'JOBS_MAX_RUNNING_PER_ACCOUNT',
];

/** `npx tsc -p tsconfig.build.json`, as `npm run build` does. */
export async function build(): Promise<void> {
  await promisify(execFile)(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
    (err: { stdout?: string; stderr?: string }) => {
      throw new Error(`The build failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    },
  );
}

export interface ServerProcess {
  child: ChildProcess;
  output: () => string;
  /** The exit code, or the signal's name. */
  exited: Promise<number | string>;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
}

const running = new Set<ChildProcess>();

/** Starts the built server with `env` (plus a temp DATA_DIR, port 0 and no demo) and waits until it is ready. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const base = { ...process.env };
  for (const name of CONFIG_VARS) delete base[name];
  const dataDir = mkdtempSync(join(tmpdir(), 'reblog-worker-'));
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { ...base, NODE_ENV: 'development', PORT: '0', SEED_DEMO: 'false', LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const onData = (chunk: Buffer) => (output += chunk.toString());
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string>((done) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      rmSync(dataDir, { recursive: true, force: true });
      done(code ?? signal ?? -1);
    }),
  );
  const waitFor = async (pattern: RegExp, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    let gone = false;
    void exited.then(() => (gone = true));
    while (!pattern.test(output)) {
      if (gone) throw new Error(`The server exited before printing ${pattern}:\n${output.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${pattern}:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const server = { child, output: () => output, exited, waitFor };
  await waitFor(/Reblog MCP ready/);
  return server;
}

/** Kills every server a test left running. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          child.once('exit', () => done());
          child.kill('SIGKILL');
        }),
    ),
  );
}
