import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { freePort } from '../../src/common/net.js';
import { createDatabase, withClient } from '../support/database.js';
import { newUser } from '../support/people.js';
import { ensureBuilt, killAll, spawnServer } from '../support/server-process.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { field, pathOf, setCookies, sqlOn } from './sign-in-helpers.js';

/**
 * The demo owner's link printed by the first `npm start`, and `npm run login-link -- <email>`, as a
 * person runs them: the built server and the command in processes of their own, on the embedded
 * database of a DATA_DIR (running, then stopped) and on DATABASE_URL.
 */
const ROOT = resolve(__dirname, '..', '..');
const LINK_LINE = /Sign in as (\S+): (http:\/\/\S+\/oauth\/login\?token=rbl_[A-Za-z0-9_-]{43})/;
// The settings the command reads: a child gets only those its test gives it.
const CONFIG_VARS = ['NODE_ENV', 'PORT', 'HOST', 'PUBLIC_URL', 'DATABASE_URL', 'DATA_DIR', 'ADMIN_TOKEN', 'LOGIN_METHODS', 'DEMO_OWNER_EMAIL', 'LOG_LEVEL'];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` in the checkout with `env` (and none of the test run's settings). */
function run(command: string, args: string[], env: Record<string, string>): Promise<Ran> {
  const base = { ...process.env };
  for (const name of CONFIG_VARS) delete base[name];
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...base, NODE_ENV: 'development', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

const loginLink = (args: string[], env: Record<string, string>) => run(process.execPath, ['scripts/login-link.mjs', ...args], env);

/** Opens a link's page on `base` and presses Sign in: the answer, and the Cookie of the session it made. */
async function follow(base: string, url: string): Promise<{ status: number; location?: string; session?: string }> {
  const http = request(base);
  const page = await http.get(pathOf(url));
  expect(page.status).toBe(200);
  const pre = setCookies(page).rb_login_csrf.value;
  const res = await http
    .post('/oauth/login')
    .type('form')
    .set('Cookie', `rb_login_csrf=${pre}`)
    .send({ token: field(page.text, 'token')!, csrf: field(page.text, 'csrf')! });
  const session = setCookies(res).rb_session?.value;
  return { status: res.status, location: res.headers.location, session: session ? `rb_session=${session}` : undefined };
}

describe('the demo owner’s sign-in link and npm run login-link', () => {
  const dirs: string[] = [];

  beforeAll(async () => {
    const build = await ensureBuilt();
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.output}`);
  }, 180_000);

  afterAll(async () => {
    await killAll();
    for (const dir of dirs) {
      const pidFile = join(dir, 'postgres', 'postmaster.pid');
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGQUIT');
        } catch {
          // gone already
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on the embedded database: the first start prints the demo owner’s link; login-link works while the server runs and after it stopped', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'reblog-signin-'));
    chmodSync(dataDir, 0o755);
    dirs.push(dataDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { DATA_DIR: dataDir, PORT: String(port) };

    const server = spawnServer(env);
    await server.waitFor(/Demo tenant created\. API key/);
    const [, email, url] = await server.waitFor(LINK_LINE);
    expect(email).toBe('owner@demo.test');
    expect(url.startsWith(`${base}/oauth/login?token=rbl_`)).toBe(true);
    await server.waitFor(/works once, for 15 minutes; npm run login-link -- owner@demo\.test prints another/);

    // The printed link signs the demo owner in, once.
    const signedIn = await follow(base, url);
    expect(signedIn).toMatchObject({ status: 303, location: '/console/' });
    const who = await request(base).get('/oauth/login').set('Cookie', signedIn.session!);
    expect(who.text).toContain('You are signed in as <strong>owner@demo.test</strong>');
    expect((await follow(base, url)).status).toBe(400);

    // While the server runs: the command reads the running cluster's port and password.
    const whileRunning = await loginLink(['OWNER@demo.test'], env);
    expect(whileRunning.stderr).toBe('');
    expect(whileRunning.code).toBe(0);
    const [, , printed] = whileRunning.stdout.match(LINK_LINE)!;
    expect(whileRunning.stdout).toContain('Sign in as owner@demo.test: ');
    expect(printed.startsWith(`${base}/oauth/login?token=`)).toBe(true);
    expect(await follow(base, printed)).toMatchObject({ status: 303 });

    // A return_to, and an unknown email.
    const withReturn = await loginLink(['owner@demo.test', '--return-to', '/console/projects'], env);
    expect(withReturn.code).toBe(0);
    expect(await follow(base, withReturn.stdout.match(LINK_LINE)![2])).toMatchObject({ status: 303, location: '/console/projects' });
    const unknown = await loginLink(['nobody@demo.test'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No user has the email "nobody@demo\.test"/);
    expect(unknown.stdout).toBe('');

    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // Stopped: the command starts the cluster for itself, and stops it again.
    const whileStopped = await loginLink(['owner@demo.test'], env);
    expect(whileStopped.code).toBe(0);
    const stoppedLink = whileStopped.stdout.match(LINK_LINE)![2];
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // The next start serves that link, and prints no new demo link.
    const again = spawnServer(env);
    await again.waitFor(/Reblog MCP ready/);
    expect(await follow(base, stoppedLink)).toMatchObject({ status: 303 });
    await again.stop('SIGTERM');
    expect(again.output()).not.toMatch(/Sign in as|Demo tenant created/);
  }, 240_000);

  it('DEMO_OWNER_EMAIL names the demo owner: the first start on an empty DATABASE_URL prints their link', async () => {
    const db = await createDatabase();
    try {
      const server = await db.server({ SEED_DEMO: 'true', DEMO_OWNER_EMAIL: 'Boss@Demo.test' });
      const [, email, url] = await server.waitFor(LINK_LINE);
      expect(email).toBe('boss@demo.test');
      expect(await follow(server.baseUrl, url)).toMatchObject({ status: 303, location: '/console/' });
      const { rows } = await withClient(db.url, (c) => c.query(`SELECT u.email, m.role FROM account_members m JOIN users u ON u.id = m.user_id`));
      expect(rows).toEqual([{ email: 'boss@demo.test', role: 'owner' }]);
    } finally {
      await db.drop();
    }
  }, 120_000);

  it('a DATA_DIR with no database yet: says to start the server first', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'reblog-signin-'));
    dirs.push(dataDir);
    const res = await loginLink(['owner@demo.test'], { DATA_DIR: dataDir });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/start the server once \(npm start\)/);
  });

  it('a DATABASE_URL nobody answers on: says it could not, in a sentence, and exits 1', async () => {
    const port = await freePort();
    const res = await loginLink(['owner@demo.test'], { DATABASE_URL: `postgres://reblog:x@127.0.0.1:${port}/reblog` });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^Could not make a sign-in link: .*ECONNREFUSED/m);
    expect(res.stderr).not.toMatch(/ExceptionHandler|\n\s+at /);
  });

  describe('with DATABASE_URL', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('npm run login-link -- <email> prints a link of PUBLIC_URL that signs the person in', async () => {
      const person = await newUser(t);
      const env = { DATABASE_URL: t.config.databaseUrl!, PUBLIC_URL: t.config.publicUrl };
      const res = await run('npm', ['run', '--silent', 'login-link', '--', person.email], env);
      expect(res.code).toBe(0);
      const [, email, url] = res.stdout.match(LINK_LINE)!;
      expect(email).toBe(person.email);
      expect(url.startsWith(`${t.config.publicUrl}/oauth/login?token=rbl_`)).toBe(true);
      expect(res.stdout).toMatch(/works once, for 15 minutes/);
      expect(await follow(t.baseUrl, url)).toMatchObject({ status: 303, location: '/console/' });
      // The command is the operator's act, in the audit trail (docs/admin-api.md#audit-trail).
      const made = await t.http.get('/admin/v1/audit?action=login_link.created').set('Authorization', `Bearer ${t.adminToken}`);
      expect(made.body.items.filter((e: { target: { user_id: string } }) => e.target.user_id === person.id)).toEqual([
        expect.objectContaining({ actor_type: 'operator', account_id: null }),
      ]);
    }, 60_000);

    it('refuses a disabled person, a bad return_to and a missing email, with a sentence', async () => {
      const env = { DATABASE_URL: t.config.databaseUrl!, PUBLIC_URL: t.config.publicUrl };
      const person = await newUser(t);
      const badReturn = await loginLink([person.email, '--return-to', 'https://evil.test/'], env);
      expect(badReturn.code).toBe(1);
      expect(badReturn.stderr).toMatch(/return_to must be a path on this server/);
      const noEmail = await loginLink([], env);
      expect(noEmail.code).toBe(2);
      expect(noEmail.stderr).toMatch(/Usage: npm run login-link -- <email>/);
      await sqlOn(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, [person.id]);
      const disabled = await loginLink([person.email], env);
      expect(disabled.code).toBe(1);
      expect(disabled.stderr).toMatch(/is disabled/);
    }, 60_000);
  });
});
