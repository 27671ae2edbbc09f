import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppOptions } from './app.module.js';
import { shutdownTelemetry } from './common/telemetry.js';
import { ConfigError, loadConfig, type AppConfig } from './config/config.js';
import type { DatabaseUnreachableError } from './database/check-database.js';
import type { EmbeddedPostgres } from './database/embedded-postgres.js';

const say = (line: string) => process.stdout.write(line + '\n');
// A supervisor that closed our output (its end of the pipe is gone) must not turn a drain into a crash
// that leaves the embedded PostgreSQL running: lines that cannot be written are dropped.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

/**
 * Starts the server as `npm start` does: configuration, database, migrations, the app, the demo seed
 * and the ready lines. `extraModules` are added to the app (the conformance entry point's fixture tools).
 */
export async function start({ extraModules }: Pick<AppOptions, 'extraModules'> = {}): Promise<void> {
  const started = Date.now();
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(`Configuration error: ${err.message}`);
    throw err;
  }
  // The embedded PostgreSQL starts (a child process: mostly waiting) while Node loads Nest, TypeORM and the
  // app (CPU-bound, seconds); both only once the configuration is known to be good.
  const embeddedStarting = config.databaseUrl
    ? undefined
    : import('./database/embedded-postgres.js').then(({ EmbeddedPostgres }) => EmbeddedPostgres.start({ dir: embeddedDir(config) }));
  embeddedStarting?.catch(() => undefined); // reported below, once awaited
  // An external database is checked while the app loads too, and a failure ends the start at once: a wrong
  // DATABASE_URL is told in a moment, however long loading takes on a busy machine. A time-out is the
  // exception: loading keeps this process too busy to read the answer on a crowded machine, so the
  // database is asked again once loading is done.
  const externalChecked = config.databaseUrl
    ? (await import('./database/check-database.js')).checkDatabase(config.databaseUrl).then(
        () => true,
        (err: DatabaseUnreachableError) => {
          if (!err.timedOut) fail(`Reblog MCP could not start: ${err.message}`);
          return false;
        },
      )
    : undefined;
  const [{ resolveAdminToken }, { createApp }, { checkDatabase }, { migrate }, { DemoSeed }, { drainAndClose }] = await Promise.all([
    import('./admin/admin-token.js'),
    import('./app.factory.js'),
    import('./database/check-database.js'),
    import('./database/migrate.js'),
    import('./demo/demo-seed.js'),
    import('./health/graceful-shutdown.js'),
  ]);

  let embedded: EmbeddedPostgres | undefined;
  if (embeddedStarting) {
    try {
      embedded = await embeddedStarting;
    } catch (err) {
      fail(`Reblog MCP could not start its embedded PostgreSQL: ${(err as Error).message}`);
    }
  }
  const databaseUrl = embedded?.url ?? config.databaseUrl!;
  let app: NestExpressApplication | undefined;
  const stop = async (code: number) => {
    await app?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    // The spans still batched are sent before the process ends.
    await shutdownTelemetry().catch(() => undefined);
    process.exit(code);
  };
  // Drain on SIGTERM/SIGINT (see drainAndClose): readiness goes false, after a grace new requests get 503,
  // in-flight ones finish, the activity log is flushed, then exit 0. No grace for Ctrl-C (no gateway to
  // tell); a second Ctrl-C stops at once. Installed as soon as the server listens, before it says it is
  // ready: a SIGTERM sent on the ready line (as a supervisor or a test may) drains too.
  let stopping = false;
  const drainOnSignals = (running: NestExpressApplication) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        if (stopping) {
          if (signal === 'SIGINT') void stop(130);
          return;
        }
        stopping = true;
        const graceMs = signal === 'SIGTERM' ? config.shutdownGraceMs : 0;
        drainAndClose(running, { graceMs, timeoutMs: config.shutdownTimeoutMs, log: say }).then(
          () => {
            app = undefined; // closed already
            return stop(0);
          },
          (err: Error) => {
            process.stderr.write(`Shutdown failed: ${err.stack ?? err.message}\n`);
            void stop(1);
          },
        );
      });
    }
  };
  try {
    if (!(await externalChecked)) await checkDatabase(databaseUrl);
    if (config.migrationsRun) await migrate(databaseUrl);
    const admin = resolveAdminToken(config);
    app = await createApp({ config, databaseUrl, adminToken: admin.token, extraModules });
    await app.listen(config.port, config.host);
    drainOnSignals(app);

    const demo = config.seedDemo ? await app.get(DemoSeed).seedIfEmpty() : null;
    const mcpUrl = `${config.publicUrl}/mcp`;
    say(`Reblog MCP ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${mcpUrl}`);
    say(`Admin API: ${config.publicUrl}/admin/v1 (docs at ${config.publicUrl}/admin/v1/docs)`);
    if (embedded && embedded.dataDir !== embeddedDir(config)) {
      say(`Database: ${embedded.dataDir} (the "postgres" user cannot reach ${embeddedDir(config)})`);
    }
    if (admin.file) say(`Admin token: in ${admin.file}${admin.generated ? ' (generated now)' : ''}`);
    if (demo && !config.production) {
      say(`Demo tenant created. API key (shown once): ${demo.key}`);
      say(`Connect Claude Code: claude mcp add --transport http reblog ${mcpUrl} --header "Authorization: Bearer ${demo.key}"`);
      const minutes = Math.round((demo.owner.expiresAt.getTime() - Date.now()) / 60_000);
      say(`Sign in as ${demo.owner.email}: ${demo.owner.signInUrl}`);
      say(`  (works once, for ${minutes} minutes; npm run login-link -- ${demo.owner.email} prints another)`);
    }
  } catch (err) {
    process.stderr.write(`Reblog MCP could not start: ${(err as Error).message}\n`);
    await stop(1);
  }
}

function embeddedDir(config: AppConfig): string {
  return join(config.dataDir, 'postgres');
}

function fail(message: string): never {
  process.stderr.write(message + '\n');
  process.exit(1);
}
