import { runAs } from '../audit/audit-context.js';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DomainError } from '../common/domain-error.js';
import { ConfigModule } from '../config/config.module.js';
import { ConfigError, loadConfig, type AppConfig } from '../config/config.js';
import { DatabaseModule } from '../database/database.module.js';
import { EmbeddedPostgres, reachableDataDir } from '../database/embedded-postgres.js';
import { LoginLinksModule } from '../login-links/login-links.module.js';
import { LoginLinksService } from '../login-links/login-links.service.js';

const USAGE = 'Usage: npm run login-link -- <email> [--return-to /path] [--expires-in seconds]';
const UNDEFINED_TABLE = '42P01';

/** What the command prints and how it ends. */
interface Io {
  out(line: string): void;
  err(line: string): void;
}

@Module({})
class LoginLinkCliModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return { module: LoginLinkCliModule, imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot(databaseUrl), LoginLinksModule] };
  }
}

/**
 * `npm run login-link -- <email>` (scripts/login-link.mjs runs the build of this file): prints a
 * single-use sign-in link for a person, for a server with no identity provider. It reaches the
 * database the server uses: DATABASE_URL, or else the embedded one of DATA_DIR, the running
 * server's (its port and password are in the cluster's files) or, when the server is stopped, its
 * own start of that cluster for the moment it takes. Answers the exit code.
 */
export async function main(
  argv: string[],
  io: Io = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') },
): Promise<number> {
  let email: string | undefined;
  let options: { return_to?: string; expires_in?: number };
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'return-to': { type: 'string' }, 'expires-in': { type: 'string' } },
    });
    email = positionals[0];
    if (!email || positionals.length > 1) throw new Error('Name one email.');
    const expiresIn = values['expires-in'] === undefined ? undefined : Number(values['expires-in']);
    if (expiresIn !== undefined && (!Number.isInteger(expiresIn) || expiresIn < 60 || expiresIn > 7 * 86_400))
      throw new Error('--expires-in must be a whole number of seconds from 60 to 604800.');
    options = { return_to: values['return-to'], expires_in: expiresIn };
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }

  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`Configuration error: ${err.message}`);
      return 1;
    }
    throw err;
  }

  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const found = runningEmbedded(config);
    if (found === 'none') {
      io.err(
        `There is no database in ${join(config.dataDir, 'postgres')} yet: start the server once (npm start), or set DATABASE_URL and DATA_DIR as the server has them.`,
      );
      return 1;
    }
    if (found === 'stopped') {
      embedded = await EmbeddedPostgres.start({ dir: join(config.dataDir, 'postgres') });
      databaseUrl = embedded.url;
    } else {
      databaseUrl = found;
    }
  }

  let app: INestApplicationContext | undefined;
  try {
    app = await NestFactory.createApplicationContext(LoginLinkCliModule.forRoot(config, databaseUrl), { logger: false, abortOnError: false });
    // Whoever runs the command has the server's database: the operator.
    const service = app.get(LoginLinksService);
    const link = await runAs({ type: 'operator' }, () => service.createForEmail(email, options));
    const minutes = Math.round((link.expires_at.getTime() - Date.now()) / 60_000);
    io.out(`Sign in as ${link.user.email}: ${link.url}`);
    io.out(`  (works once, for ${minutes} minutes)`);
    return 0;
  } catch (err) {
    if (err instanceof DomainError) {
      io.err(err.message);
      return 1;
    }
    if ((err as { code?: string }).code === UNDEFINED_TABLE) {
      io.err('The database has no people yet: start the server once (npm start) so it sets the database up.');
      return 1;
    }
    io.err(`Could not make a sign-in link: ${(err as Error).message}`);
    return 1;
  } finally {
    await app?.close();
    await embedded?.stop();
  }
}

/**
 * The embedded cluster of DATA_DIR (where the server keeps it: the folder itself, or its stand-in
 * under /var/lib/reblog when run as root): the URL of its running server, `stopped` when no server
 * runs it, `none` when there is no cluster.
 */
function runningEmbedded(config: AppConfig): string | 'stopped' | 'none' {
  const requested = join(config.dataDir, 'postgres');
  const dirs = [requested, reachableDataDir(requested)].filter((dir) => existsSync(join(dir, 'PG_VERSION')));
  if (!dirs.length) return 'none';
  for (const dir of dirs) {
    const pidFile = join(dir, 'postmaster.pid');
    if (!existsSync(pidFile)) continue;
    // postmaster.pid: pid, data folder, start time, port, socket folder, listen address, ...
    const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
    if (!alive(Number(pid))) continue;
    const password = readFileSync(join(dir, '..', `${basename(dir)}.password`), 'utf8').trim();
    return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${Number(port)}/reblog`;
  }
  return 'stopped';
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user (the postgres user, when this runs unprivileged next to a root server).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
