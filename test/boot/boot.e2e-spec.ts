import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { MISSING_ID } from '../support/fixtures.js';
import { createApp } from '../../src/app.factory.js';
import { freePort } from '../../src/common/net.js';
import { loadConfig } from '../../src/config/config.js';
import { ensureBuilt, killAll, MAIN, spawnServer as start, type SpawnedServer as Server } from '../support/server-process.js';

/**
 * The built server as a person runs it: `node dist/src/main.js` in its own process, on its own
 * embedded PostgreSQL under a temp DATA_DIR (not the test run's database), with none of the test
 * run's settings.
 */
const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

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

/** The exit code (or the signal's name) once the server has exited and all it printed is read. */
async function expectExitWithin(server: Server, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`The server did not exit within ${ms} ms; output:\n${server.output().slice(-3000)}`)), ms);
  });
  try {
    const { code, signal } = await Promise.race([server.exited, timeout]);
    return code ?? signal ?? -1;
  } finally {
    clearTimeout(timer);
  }
}

describe('boot: the built server as a process', () => {
  const dataDirs: string[] = [];
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    // The run's one build, as `npm run build` does it (shared with the other suites that start the
    // server, so none rewrites dist/ under another's process); type errors fail here rather than as a
    // confusing boot failure.
    const build = await ensureBuilt();
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.output}`);
    expect(existsSync(MAIN)).toBe(true);
  }, 180_000);

  afterAll(async () => {
    await killAll();
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
    let demoKey: string;

    beforeAll(() => {
      dataDir = tempDataDir();
      dataDirs.push(dataDir);
    });

    it('first start: prints the MCP URL, the demo key and the claude line, serves /healthz and /readyz, stops on SIGTERM', async () => {
      const port = await freePort();
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
      const unknown = await fetch(`${url}/admin/v1/accounts/${MISSING_ID}`, { headers: { authorization: `Bearer ${adminToken}` } });
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
      const port = await freePort();
      const began = Date.now();
      const server = start({ DATA_DIR: dataDir, PORT: String(port) });
      const url = `http://127.0.0.1:${port}`;
      await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
      timings.second_boot_ms = Date.now() - began;
      expect((await get(`${url}/readyz`)).status).toBe(200);
      await server.waitFor(/Admin token: in .*admin-token\n/);

      const pid = postmasterPid(dataDir)!;
      expect(alive(pid)).toBe(true);
      server.child.kill('SIGKILL');
      expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
      // Exited, with all it printed read: a would-be seed (its lines follow the ready line) had its chance.
      expect(server.output()).not.toMatch(/Demo tenant created|rbk_|claude mcp add|generated now/);
      // The database runs in its own process group: it outlives the server killed under it.
      expect(alive(pid)).toBe(true);
    }, 120_000);

    it('a start after kill -9 stops the leftover postmaster, serves, and SIGTERM leaves no postmaster', async () => {
      const leftover = postmasterPid(dataDir);
      expect(leftover && alive(leftover)).toBe(true);
      const port = await freePort();
      const began = Date.now();
      const server = start({ DATA_DIR: dataDir, PORT: String(port) });
      const url = `http://127.0.0.1:${port}`;
      await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
      timings.after_kill9_boot_ms = Date.now() - began;
      expect(alive(leftover!)).toBe(false);
      expect((await get(`${url}/healthz`)).status).toBe(200);
      expect((await get(`${url}/readyz`)).status).toBe(200);

      const pid = postmasterPid(dataDir)!;
      expect(pid).not.toBe(leftover);
      server.child.kill('SIGTERM');
      expect(await expectExitWithin(server, 20_000)).toBe(0);
      expect(server.output()).not.toContain('rbk_');
      expect(alive(pid)).toBe(false);
      expect(server.output()).not.toMatch(STACK_LINE);
    }, 120_000);

    it('a supervisor that closed its end of the output: SIGTERM still drains, exits 0 and stops the PostgreSQL', async () => {
      const port = await freePort();
      const server = start({ DATA_DIR: dataDir, PORT: String(port) });
      await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
      const pid = postmasterPid(dataDir)!;
      // The drain prints its steps: each write now meets a closed pipe (EPIPE).
      server.child.stdout!.destroy();
      server.child.stderr!.destroy();
      server.child.kill('SIGTERM');
      expect(await expectExitWithin(server, 20_000)).toBe(0);
      expect(alive(pid)).toBe(false);
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
      const second = start({ DATA_DIR: dataDir, PORT: String(await freePort()) });
      await second.waitFor(/Admin token: in .*admin-token\n/);
      expect(second.output()).toContain(`Database: ${cluster} `);
      second.child.kill('SIGTERM');
      expect(await expectExitWithin(second, 20_000)).toBe(0);
      expect(second.output()).not.toMatch(/Demo tenant created/);
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
    const account = `http://127.0.0.1:${port}/admin/v1/accounts/${MISSING_ID}`;
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
    const server = start({ NODE_ENV: 'production', ADMIN_TOKEN: adminToken, REQUEST_STATE_SECRET: 'r'.repeat(48), DATA_DIR: dataDir, PORT: String(port) });
    await server.waitFor(/Reblog MCP ready in [\d.]+ s: /);
    expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const denied = await fetch(`http://127.0.0.1:${port}/admin/v1/accounts/${MISSING_ID}`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(denied.status).toBe(404);
    server.child.kill('SIGTERM');
    // Exited, with all it printed read: a demo seed (the database was empty; its lines follow the ready line) had its chance.
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
      [{ NODE_ENV: 'production', ADMIN_TOKEN: 'a-production-admin-token' }, /REQUEST_STATE_SECRET is required when NODE_ENV=production/],
      [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN must be at least 16 characters/],
      [{ ROLE: 'boss' }, /ROLE must be one of api, worker, all; got "boss"/],
      [{ DATABASE_URL: 'mysql://localhost/db' }, /DATABASE_URL must be a postgres: or postgresql: URL/],
      [{ SEED_DEMO: 'maybe' }, /SEED_DEMO must be true or false/],
    ])(
      '%p',
      async (env, message) => {
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
      },
      30_000,
    );

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

describe('createApp on a database that does not answer', () => {
  it('rejects with the reason, for its caller to report, instead of ending the process', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: `postgres://reblog:x@127.0.0.1:${await freePort()}/reblog`,
      ADMIN_TOKEN: 'a-test-admin-token-123',
      LOG_LEVEL: 'silent',
    });
    await expect(createApp({ config, databaseUrl: config.databaseUrl!, adminToken: 'a-test-admin-token-123' })).rejects.toThrow(/ECONNREFUSED/);
  });
});
