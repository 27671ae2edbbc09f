// Starts the built server (dist/) in a child process on a free loopback port with a fresh
// temporary DATA_DIR (its own embedded PostgreSQL), waits until it is ready and reads the demo
// API key from its output. Shared by scripts/conformance.mjs and bench/.
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * What `npm start` passes to node (its V8 flags, then the entry point), read from package.json so a
 * bench measures the server exactly as it is started.
 */
export const START_ARGS = (() => {
  const start = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start.split(/\s+/);
  if (start[0] !== 'node') throw new Error(`The start script is expected to run node: ${start.join(' ')}`);
  return start.slice(1);
})();

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** Runs a command with inherited stdio; resolves on exit code 0. */
export function run(cmd, args, options = {}) {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd: ROOT, ...options });
    child.once('error', fail);
    child.once('exit', (code, signal) => (code === 0 ? done() : fail(new Error(`${cmd} ${args.join(' ')} exited with ${signal ?? code}`))));
  });
}

/**
 * Starts the server as `npm start` does ({@link START_ARGS}), or another built entry point (`entry`, a path
 * from `cwd`, the root by default). Resolves to { url, origin, port, key, pid, stop() } once the server has
 * printed its ready line and the demo key; rejects with the output if it exits first. With `user`
 * ({uid, gid}) the server runs as that user, in a DATA_DIR it owns. stop() resolves to the exit code
 * (or the signal that ended it).
 */
export async function startServer({ env = {}, nodeArgs = [], entry = START_ARGS.at(-1), readyTimeoutMs = 180_000, cwd = ROOT, user } = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'reblog-run-'));
  // When run as root, the embedded PostgreSQL runs as the postgres user, which must enter this folder.
  chmodSync(dataDir, 0o755);
  if (user) chownSync(dataDir, user.uid, user.gid);
  // The bench's own node flags go with the start script's, before the entry point.
  const child = spawn(process.execPath, [...START_ARGS.slice(0, -1), ...nodeArgs, entry], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: {
      ...process.env,
      ...(user ? { HOME: dataDir } : {}),
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: '',
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      SEED_DEMO: 'true',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '1000000',
      ...env,
    },
  });
  let output = '';
  let exited = false;
  const exit = new Promise((done) => {
    child.once('exit', (code, signal) => ((exited = true), done(signal ?? code)));
    // Not started at all (node not executable by `user`, say): said as the exit.
    child.once('error', (err) => ((exited = true), (output += `${err.message}\n`), done(err.code ?? 'error')));
  });

  const ready = new Promise((done, fail) => {
    let key;
    let isReady = false;
    const timer = setTimeout(() => fail(new Error(`The server was not ready within ${readyTimeoutMs / 1000} s.\n${output.slice(-4000)}`)), readyTimeoutMs);
    const onData = (chunk) => {
      output += chunk;
      if (output.length > 200_000) output = output.slice(-100_000);
      isReady ||= /Reblog MCP ready/.test(output);
      key ??= /API key \(shown once\): (\S+)/.exec(output)?.[1];
      if (isReady && key) {
        clearTimeout(timer);
        done(key);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    exit.then((code) => {
      clearTimeout(timer);
      fail(new Error(`The server exited (${code}) before it was ready.\n${output.slice(-4000)}`));
    });
  });

  const stop = async () => {
    let killed = false;
    if (!exited) {
      child.kill('SIGTERM');
      const late = setTimeout(() => ((killed = true), child.kill('SIGKILL')), 20_000);
      await exit;
      clearTimeout(late);
    }
    if (killed) stopLeftoverPostgres(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
    return exit;
  };

  try {
    const key = await ready;
    const origin = `http://127.0.0.1:${port}`;
    return { url: `${origin}/mcp`, origin, port, key, pid: child.pid, dataDir, stop, output: () => output };
  } catch (err) {
    await stop();
    throw err;
  }
}

// The embedded postmaster runs in its own process group; if the server was killed it stays behind.
function stopLeftoverPostgres(dataDir) {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGQUIT');
  } catch {
    // already gone
  }
}
