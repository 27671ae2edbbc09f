import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app.factory.js';
import type { AppOptions } from '../../src/app.module.js';
import { freePort } from '../../src/common/net.js';
import { loadConfig, type AppConfig } from '../../src/config/config.js';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  adminToken: string;
  /** supertest bound to the running server */
  http: ReturnType<typeof request>;
  /** Stops it (once: later calls wait for the same close). */
  close(): Promise<void>;
}

/**
 * Boots the real app (with `extraModules`, e.g. fixture tools) on the test run's Postgres, listening on
 * a free loopback port chosen first, so `PUBLIC_URL` (the OAuth issuer, the metadata URLs) is the real address.
 */
export async function startTestApp(env: Record<string, string> = {}, extraModules: AppOptions['extraModules'] = []): Promise<TestApp> {
  const adminToken = 'test-admin-' + randomBytes(12).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'reblog-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    // Test output is the tests' results: an app in the test process logs errors only, unless a test sets LOG_LEVEL.
    LOG_LEVEL: 'error',
    PORT: String(env.PORT ?? (await freePort())),
    RATE_LIMIT_PER_SECOND: '100000',
    ...env,
  });
  const app = await createApp({ config, databaseUrl: config.databaseUrl!, adminToken, extraModules });
  await app.listen(config.port, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${config.port}`;
  let closed: Promise<void> | undefined;
  // Once: a test may close its app early (to wait for its shutdown) and leave the rest to afterAll.
  const close = () => (closed ??= app.close().then(() => rmSync(dataDir, { recursive: true, force: true })));
  return { app, config, baseUrl, adminToken, http: request(baseUrl), close };
}
