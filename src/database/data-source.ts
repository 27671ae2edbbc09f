import type { DataSourceOptions } from 'typeorm';
import { InitialSchema1764500000000 } from './migrations/1764500000000-initial-schema.js';
import { JobRequests1764600000000 } from './migrations/1764600000000-job-requests.js';
import { ArticleCounts1764604000000 } from './migrations/1764604000000-article-counts.js';
import { ActivityLogScale1764610000000 } from './migrations/1764610000000-activity-log-scale.js';
import { RequestCancellations1764620000000 } from './migrations/1764620000000-request-cancellations.js';
import { SessionExpiry1764630000000 } from './migrations/1764630000000-session-expiry.js';
import { ArticleWordCount1764650000000 } from './migrations/1764650000000-article-word-count.js';
import { FairJobClaims1764660000000 } from './migrations/1764660000000-fair-job-claims.js';
import { PeopleAndOauth1764700000000 } from './migrations/1764700000000-people-and-oauth.js';
import { SignIn1764700010000 } from './migrations/1764700010000-sign-in.js';
import { SignInAndOauthPurge1764700020000 } from './migrations/1764700020000-sign-in-and-oauth-purge.js';
import { ActivityConsole1764800000000 } from './migrations/1764800000000-activity-console.js';
import { ResourceSubscriptions1764900000100 } from './migrations/1764900000100-resource-subscriptions.js';
import { SessionCapabilities1764900000200 } from './migrations/1764900000200-session-capabilities.js';
import { CompletionIndexes1764900000300 } from './migrations/1764900000300-completion-indexes.js';
import { McpTasks1764900000400 } from './migrations/1764900000400-mcp-tasks.js';
import { ConsoleAccountability1765000000000 } from './migrations/1765000000000-console-accountability.js';
import { OauthRequestsPerSession1765000100000 } from './migrations/1765000100000-oauth-requests-per-session.js';
import { PrincipalChangeTriggers1765100000000 } from './migrations/1765100000000-principal-change-triggers.js';
import { ActivityRequestId1765200000000 } from './migrations/1765200000000-activity-request-id.js';
import { JobTraceContext1765200000100 } from './migrations/1765200000100-job-trace-context.js';
import { RetentionIndexes1765200050000 } from './migrations/1765200050000-retention-indexes.js';
import { AuditEvents1765200100000 } from './migrations/1765200100000-audit-events.js';
import { IdentityProviders1766200000000 } from './migrations/1766200000000-identity-providers.js';
import { EnterpriseGrants1766200000100 } from './migrations/1766200000100-enterprise-grants.js';
import { PrivateKeyJwt1766200000200 } from './migrations/1766200000200-private-key-jwt.js';
import { CompanySignIn1766300000000 } from './migrations/1766300000000-company-sign-in.js';
import { ActivityAscendingIndexes1766400000000 } from './migrations/1766400000000-activity-ascending-indexes.js';

export const MIGRATIONS = [
  InitialSchema1764500000000,
  JobRequests1764600000000,
  ArticleCounts1764604000000,
  ActivityLogScale1764610000000,
  RequestCancellations1764620000000,
  SessionExpiry1764630000000,
  ArticleWordCount1764650000000,
  FairJobClaims1764660000000,
  PeopleAndOauth1764700000000,
  SignIn1764700010000,
  SignInAndOauthPurge1764700020000,
  ActivityConsole1764800000000,
  ResourceSubscriptions1764900000100,
  SessionCapabilities1764900000200,
  CompletionIndexes1764900000300,
  McpTasks1764900000400,
  ConsoleAccountability1765000000000,
  OauthRequestsPerSession1765000100000,
  PrincipalChangeTriggers1765100000000,
  ActivityRequestId1765200000000,
  JobTraceContext1765200000100,
  RetentionIndexes1765200050000,
  AuditEvents1765200100000,
  IdentityProviders1766200000000,
  EnterpriseGrants1766200000100,
  PrivateKeyJwt1766200000200,
  CompanySignIn1766300000000,
  ActivityAscendingIndexes1766400000000,
];

/** Connections of the main pool kept open however long it is unused: enough for a few clients' calls at once. */
export const WARM_CONNECTIONS = 2;

/**
 * The one set of DataSource options, used by Nest, the migration command and the tests. It lists no
 * entities: every statement is SQL in a repository, so the app never reads TypeORM's entity metadata,
 * and the database layer imports no feature. The TypeORM CLI's DataSource (ormconfig.ts, for
 * `npm run migration:generate`) adds them.
 */
export function dataSourceOptions(url: string, overrides: { poolSize?: number } = {}): DataSourceOptions {
  const max = overrides.poolSize ?? 20;
  return {
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: ['error', 'warn'],
    extra: {
      max,
      // Connections beyond these close after 10 s unused (pg-pool's default). These stay, with their prepared
      // statements: a request after a quiet spell would otherwise wait for a new connection (~20 ms of
      // authentication here) and plan its statements afresh (bench/README.md, "After a quiet spell").
      min: Math.min(WARM_CONNECTIONS, max),
      // Fail fast when the database is away instead of queueing requests forever.
      connectionTimeoutMillis: 5_000,
      statement_timeout: 15_000,
      // A database host that vanished without closing the socket is noticed by TCP keepalive, not by a hang.
      keepAlive: true,
      idle_in_transaction_session_timeout: 30_000,
      application_name: 'reblog-mcp',
    },
  };
}
