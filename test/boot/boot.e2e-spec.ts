import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/net.js';

/**
 * The built server as a person runs it: `node dist/src/main.js` in its own process, on its own
 * embedded PostgreSQL under a temp DATA_DIR (not the test run's database).
 */
const ROOT = resolve(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
// Every variable the server reads: the child gets none of the test run's (DATABASE_URL above all).
const CONFIG_VARS = [
  'NODE_ENV', 'PORT', 'HOST', 'PUBLIC_URL', 'DATABASE_URL', 'DATA_DIR', 'ADMIN_TOKEN', 'ALLOWED_ORIGINS', 'RATE_LIMIT_PER_SECOND',
  'REDIS_URL', 'SYNC_BUDGET_MS', 'LOCAL_PROVIDER_DELAY_MS', 'ALLOWED_HOSTS', 'ROLE', 'WRITER_PROVIDER', 'IMAGE_PROVIDER',
  'LOG_LEVEL', 'MIGRATIONS_RUN', 'SEED_DEMO', 'SHUTDOWN_GRACE_MS', 'SHUTDOWN_TIMEOUT_MS',
  'SESSION_IDLE_TTL_S',
];
const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

interface Server {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
}

function start(env: Record<string, string>): Server {
  const base = { ...process.env };
  for (const name of CONFIG_VARS) delete base[name];
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: { ...base, NODE_ENV: 'development', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
  running.add(child);
  void exited.then(() => running.delete(child));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<RegExpMatchArray>((done, fail) => {
      const check = () => {
        const match = output.match(pattern);
        if (match) {
          cleanup();
          done(match);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        fail(new Error(`Timed out waiting for ${pattern}; output so far:\n${output.slice(-3000)}`));
      }, timeoutMs);
      const onExit = () => {
        setImmediate(() => {
          check();
          if (listeners.has(check)) {
            cleanup();
            fail(new Error(`The server exited before printing ${pattern}; output:\n${output.slice(-3000)}`));
          }
        });
      };
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off('exit', onExit);
      };
      listeners.add(check);
      child.once('exit', onExit);
      check();
    });
  return { child, output: () => output, exited, waitFor };
}

const running = new Set<ChildProcess>();


/** Whether `pid` runs; a zombie (exited, not yet reaped by whoever adopted it after a kill -9) does not. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ..."; comm may hold spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** The postmaster's pid from its lock file, or undefined when there is none. */
function postmasterPid(dataDir: string, cluster = 'postgres'): number | undefined {
  const file = join(dataDir, cluster, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

/** A DATA_DIR the `postgres` user can reach when the tests run as root (mkdtemp makes 0700 folders). */
function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'reblog-boot-'));
  chmodSync(dir, 0o755);
  return dir;
}

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

async function expectExitWithin(server: Server, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`The server did not exit within ${ms} ms; output:\n${server.output().slice(-3000)}`)), ms);
  });
  try {
    return await Promise.race([server.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('boot: the built server as a process', () => {
  const dataDirs: string[] = [];
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    // The same build as `npm run build`; type errors fail here rather than as a confusing boot failure.
    await promisify(execFile)(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`npm run build failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    expect(existsSync(MAIN)).toBe(true);
  }, 180_000);

  afterAll(() => {
    for (const child of running) child.kill('SIGKILL');
    for (const dir of dataDirs) {
      // A postmaster left by a failed test would keep the folder busy: stop the one of this folder only.
      const pid = postmasterPid(dir);
      if (pid && alive(pid)) process.kill(pid, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(`Boot times: ${JSON.stringify(timings)}`);
  });

  describe('on the embedded database', () => {
    let dataDir: string;
    let port: number;
    let demoKey: string;

    beforeAll(async () => {
      dataDir = tempDataDir();
      dataDirs.push(dataDir);
      port = await freePort();
    });

    it('first start: prints the MCP URL, the demo key and the claude line, serves /healthz and /readyz, stops on SIGTERM', async () => {
      const began = Date.now();
      const server = start({ DATA_DIR: dataDir, PORT: String(port) });
      const url = `http://127.0.0.1:${port}`;
      await server.waitFor(new RegExp(`Reblog MCP ready in [\\d.]+ s: ${url}/mcp`));
      timings.first_boot_ms = Date.now() - began;
      const [, key] = await server.waitFor(/Demo tenant created\. API key \(shown once\): (rbk_[A-Za-z0-9_-]+)/);
      demoKey = key;
      const claude = await server.waitFor(/^.*claude mcp add.*$/m);
      expect(claude[0]).toContain(`claude mcp add --transport http reblog ${url}/mcp --header "Authorization: Bearer ${demoKey}"`);

      const tokenFile = join(dataDir, 'admin-token');
      expect(server.output()).toContain(`Admin token: in ${tokenFile} (generated now)`);
      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const adminToken = readFileSync(tokenFile, 'utf8').trim();
      expect(adminToken.length).toBeGreaterThanOrEqual(32);
      // The token is where it says and opens the admin API; the secret itself is not printed.
      expect(server.output()).not.toContain(adminToken);
      const openapi = await fetch(`${url}/admin/v1/openapi.json`);
      expect(openapi.status).toBe(200);
      const unknown = await fetch(`${url}/admin/v1/accounts/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(unknown.status).toBe(404);

      expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
      const ready = await get(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ok' });

      const pid = postmasterPid(dataDir);
      expect(pid).toBeGreaterThan(0);
      expect(alive(pid!)).toBe(true);
      server.child.kill('SIGTERM');
      expect(await expectExitWithin(server, 20_000)).toBe(0);
      expect(alive(pid!)).toBe(false);
      expect(postmasterPid(dataDir)).toBeUndefined();
      expect(server.output()).not.toMatch(STACK_LINE);
    }, 120_000);

    it('second start on the same DATA_DIR: ready, no new demo key; then kill -9 leaves its postmaster running', async () => {
      expect(demoKey).toBeDefined();
      const began = Date.now();
      const server = start({ DATA_DIR: dataDir, PORT: String(port) });
      const url = `http://127.0.0.1:${port}`;
      await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
      timings.second_boot_ms = Date.now() - began;
      expect((await get(`${url}/readyz`)).status).toBe(200);
      // Give a would-be seed time to print: it comes right after the ready line on a first start.
      await server.waitFor(/Admin token: in .*admin-token\n/);
      await new Promise((r) => setTimeout(r, 300));
      expect(server.output()).not.toMatch(/Demo tenant created|rbk_|claude mcp add|generated now/);

      const pid = postmasterPid(dataDir)!;
      expect(alive(pid)).toBe(true);
      server.child.kill('SIGKILL');
      expect(await server.exited).toBe('SIGKILL');
      // The database runs in its own process group: it outlives the server killed under it.
      expect(alive(pid)).toBe(true);
    }, 120_000);

    it('a start after kill -9 stops the leftover postmaster, serves, and SIGTERM leaves no postmaster', async () => {
      const leftover = postmasterPid(dataDir);
      expect(leftover && alive(leftover)).toBe(true);
      const began = Date.now();
      const server = start({ DATA_DIR: dataDir, PORT: String(port) });
      const url = `http://127.0.0.1:${port}`;
      await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
      timings.after_kill9_boot_ms = Date.now() - began;
      expect(alive(leftover!)).toBe(false);
      expect((await get(`${url}/healthz`)).status).toBe(200);
      expect((await get(`${url}/readyz`)).status).toBe(200);
      expect(server.output()).not.toContain('rbk_');

      const pid = postmasterPid(dataDir)!;
      expect(pid).not.toBe(leftover);
      server.child.kill('SIGTERM');
      expect(await expectExitWithin(server, 20_000)).toBe(0);
      expect(alive(pid)).toBe(false);
      expect(server.output()).not.toMatch(STACK_LINE);
    }, 120_000);
  });

  // A checkout under a folder the `postgres` user cannot enter (a clone in /root, run as root): the two
  // README commands work there with no setting, the cluster kept where that user can reach it.
  (process.getuid?.() === 0 ? describe : describe.skip)('as root, with DATA_DIR under a 0700 folder', () => {
    let home: string;
    let cluster: string;

    beforeAll(() => {
      home = mkdtempSync(join(tmpdir(), 'reblog-home-')); // 0700, like /root
      expect(statSync(home).mode & 0o777).toBe(0o700);
      dataDirs.push(home);
    });

    afterAll(() => {
      if (!cluster) return;
      const pid = postmasterPid(dirname(cluster), basename(cluster));
      if (pid && alive(pid)) process.kill(pid, 'SIGQUIT');
      rmSync(cluster, { recursive: true, force: true });
      rmSync(`${cluster}.password`, { force: true });
    });

    it('keeps the cluster in /var/lib/reblog (postgres-owned, 0700), says where, and finds it again on the next start', async () => {
      const dataDir = join(home, 'reblog', '.data');
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const first = start({ DATA_DIR: dataDir, PORT: String(port) });
      const [, where] = await first.waitFor(/^Database: (\/var\/lib\/reblog\/\S+) \(the "postgres" user cannot reach (.+)\)$/m);
      cluster = where;
      expect(first.output()).toContain(`cannot reach ${join(dataDir, 'postgres')})`);
      await first.waitFor(/Demo tenant created\. API key/);
      expect((await get(`${url}/readyz`)).status).toBe(200);
      const st = statSync(cluster);
      expect(st.mode & 0o777).toBe(0o700);
      expect(st.uid).toBe(Number(execFileSync('id', ['-u', 'postgres']).toString()));
      first.child.kill('SIGTERM');
      expect(await expectExitWithin(first, 20_000)).toBe(0);

      // The same DATA_DIR maps to the same cluster: the demo tenant is there already.
      const second = start({ DATA_DIR: dataDir, PORT: String(port) });
      await second.waitFor(/Admin token: in .*admin-token\n/);
      expect(second.output()).toContain(`Database: ${cluster} `);
      expect(second.output()).not.toMatch(/Demo tenant created/);
      second.child.kill('SIGTERM');
      expect(await expectExitWithin(second, 20_000)).toBe(0);
      expect(second.output()).not.toMatch(STACK_LINE);
    }, 120_000);
  });

  it('an empty admin-token file (a first start that died after creating it) gets a new token: a bearer of white space is 401', async () => {
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    writeFileSync(join(dataDir, 'admin-token'), '', { mode: 0o600 });
    const port = await freePort();
    const server = start({ DATA_DIR: dataDir, PORT: String(port), SEED_DEMO: 'false' });
    await server.waitFor(/Admin token: in .*admin-token \(generated now\)/);
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    const account = `http://127.0.0.1:${port}/admin/v1/accounts/00000000-0000-4000-8000-000000000000`;
    for (const bearer of ['\u00a0', ' ', '']) {
      const res = await fetch(account, { headers: { authorization: `Bearer ${bearer}` } });
      expect(res.status).toBe(401);
    }
    expect((await fetch(account, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    server.child.kill('SIGTERM');
    expect(await expectExitWithin(server, 20_000)).toBe(0);
  }, 120_000);

  it('NODE_ENV=production with ADMIN_TOKEN: starts on an empty database and prints no secret', async () => {
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    const port = await freePort();
    const adminToken = 'prod-admin-token-' + 'x'.repeat(20);
    const server = start({ NODE_ENV: 'production', ADMIN_TOKEN: adminToken, DATA_DIR: dataDir, PORT: String(port) });
    await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
    expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const denied = await fetch(`http://127.0.0.1:${port}/admin/v1/accounts/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(denied.status).toBe(404);
    // The demo tenant is seeded right after the ready line (the database was empty): give it time to (not) print.
    await new Promise((r) => setTimeout(r, 500));
    server.child.kill('SIGTERM');
    expect(await expectExitWithin(server, 20_000)).toBe(0);
    const output = server.output();
    expect(output).not.toContain(adminToken);
    expect(output).not.toMatch(/rbk_|rbg_|rba_/);
    expect(output).not.toMatch(/Demo tenant created|claude mcp add|Admin token: in/);
    expect(existsSync(join(dataDir, 'admin-token'))).toBe(false);
  }, 120_000);

  it('with DATABASE_URL: serves on that database and starts no PostgreSQL of its own', async () => {
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    const port = await freePort();
    // The test run's database, shared with suites that may run meanwhile: no demo seed, and ROLE=api so this
    // process claims none of their jobs and publishes none of their scheduled articles.
    const server = start({ DATABASE_URL: process.env.DATABASE_URL!, SEED_DEMO: 'false', ROLE: 'api', DATA_DIR: dataDir, PORT: String(port) });
    await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
    expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
    server.child.kill('SIGTERM');
    expect(await expectExitWithin(server, 20_000)).toBe(0);
    expect(server.output()).not.toMatch(STACK_LINE);
  }, 120_000);

  describe('refuses to start with a sentence, not a stack trace', () => {
    it.each([
      [{ PORT: 'abc' }, /PORT must be a whole number/],
      [{ PORT: '70000' }, /PORT must be a whole number from 0 to 65535; got "70000"/],
      [{ RATE_LIMIT_PER_SECOND: '0' }, /RATE_LIMIT_PER_SECOND must be a whole number from 1 to/],
      [{ NODE_ENV: 'production' }, /ADMIN_TOKEN is required when NODE_ENV=production/],
      [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN must be at least 16 characters/],
      [{ ROLE: 'boss' }, /ROLE must be one of api, worker, all; got "boss"/],
      [{ DATABASE_URL: 'mysql://localhost/db' }, /DATABASE_URL must be a postgres: or postgresql: URL/],
      [{ SEED_DEMO: 'maybe' }, /SEED_DEMO must be true or false/],
    ])('%p', async (env, message) => {
      const dataDir = tempDataDir();
      dataDirs.push(dataDir);
      const server = start({ DATA_DIR: dataDir, ...env });
      // The configuration is checked before the app is even loaded.
      expect(await expectExitWithin(server, 5_000)).toBe(1);
      const output = server.output();
      expect(output).toMatch(/^Configuration error: /m);
      expect(output).toMatch(message);
      expect(output).not.toMatch(STACK_LINE);
      // It stopped before touching anything.
      expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
    }, 30_000);

    it('DATABASE_URL on a closed port: "Cannot reach the database", exit 1, within a few seconds', async () => {
      const port = await freePort();
      const began = Date.now();
      const dataDir = tempDataDir();
      dataDirs.push(dataDir);
      const server = start({ DATABASE_URL: `postgres://reblog:secret@127.0.0.1:${port}/reblog`, DATA_DIR: dataDir });
      expect(await expectExitWithin(server, 15_000)).toBe(1);
      const elapsed = Date.now() - began;
      const output = server.output();
      expect(output).toContain(`Cannot reach the database at 127.0.0.1:${port}/reblog`);
      expect(output).toMatch(/DATABASE_URL/);
      expect(output).not.toContain('secret');
      expect(output).not.toMatch(STACK_LINE);
      expect(output.match(/Cannot reach the database/g)).toHaveLength(1);
      timings.unreachable_database_exit_ms = elapsed;
      expect(elapsed).toBeLessThan(5_000);
    }, 30_000);
  });
});
