import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { resolve } from 'node:path';
import proxyAddr from 'proxy-addr';

export type Role = 'api' | 'worker' | 'all';
export type ProviderKind = 'local' | 'openai';
export type LoginMethod = 'link' | 'oidc' | 'proxy';
export const LOGIN_METHODS: readonly LoginMethod[] = ['link', 'oidc', 'proxy'];

export interface ProviderConfig {
  kind: ProviderKind;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  /** The image sizes the model accepts, when IMAGE_SIZES says so (image provider `openai` only). */
  sizes?: { width: number; height: number }[];
}

/** Every setting of the server, validated once at boot (README.md#configuration). */
export interface AppConfig {
  nodeEnv: string;
  production: boolean;
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl?: string;
  dataDir: string;
  adminToken?: string;
  allowedOrigins: string[];
  allowedHosts?: string[];
  rateLimitPerSecond: number;
  /**
   * How long a JSON-RPC request over the rate limit may wait for the next free slot before it is refused
   * (RATE_LIMIT_MAX_WAIT_MS; 0 refuses at once).
   */
  rateLimitMaxWaitMs: number;
  /** An MCP session unused this long (seconds) has expired: 404, then purged (SESSION_IDLE_TTL_S). */
  sessionIdleTtlS: number;
  redisUrl?: string;
  /**
   * How long a job tool's call waits for its job when the client can be kept waiting: it sent a
   * `progressToken` and accepts an event stream (it gets progress at least every
   * {@link progressHeartbeatMs}), or no connection waits at all (a task's run) (SYNC_BUDGET_MS).
   */
  syncBudgetMs: number;
  /**
   * The same for a call that cannot be kept waiting (no progress reaches its client): below the common
   * clients' 60 s timeout, after which they cancel the call and its job (SYNC_BUDGET_SILENT_MS).
   */
  syncBudgetSilentMs: number;
  /** The longest a call that waits on a job stays silent: it sends `notifications/progress` at least this often (PROGRESS_HEARTBEAT_MS). */
  progressHeartbeatMs: number;
  /**
   * How long a task (MCP tasks extension) stays `working` after its instance last renewed its lease;
   * past it, the instance is taken to have stopped and the task is reported failed (TASK_LEASE_MS).
   */
  taskLeaseMs: number;
  /** How long the server waits for the client's answer to its `elicitation/create` or `sampling/createMessage` (CLIENT_REQUEST_TIMEOUT_MS). */
  clientRequestTimeoutMs: number;
  /**
   * The key that signs `requestState` (MCP 2026-07-28 input_required results), the same on every
   * instance so that a retry may reach any of them (REQUEST_STATE_SECRET, 32+ characters). Required in
   * production; elsewhere, when unset, one is generated per process ({@link requestStateSecretGenerated}).
   */
  requestStateSecret: Buffer;
  /** REQUEST_STATE_SECRET was not set: a per-process secret (a retry on another instance is refused). */
  requestStateSecretGenerated: boolean;
  /** Jobs one account may have queued; a job tool over it is a `too_many_jobs` tool error (JOBS_MAX_QUEUED_PER_ACCOUNT). */
  jobsMaxQueuedPerAccount: number;
  /** Jobs of one account the workers run at the same time, all instances together (JOBS_MAX_RUNNING_PER_ACCOUNT). */
  jobsMaxRunningPerAccount: number;
  localProviderDelayMs: number;
  /** Revisions (earlier states) kept per article, the newest; each change prunes older ones in its transaction (ARTICLE_REVISIONS_KEPT). */
  articleRevisionsKept: number;
  /**
   * Listing pages (`list_articles` without search or tag) an instance keeps, the most recently used: one is
   * answered again while its project's generation is unchanged, checked on every call (LISTING_CACHE_PAGES; 0: none).
   */
  listingCachePages: number;
  /** Days an activity-log entry is kept; older ones are purged in the background (ACTIVITY_RETENTION_DAYS). */
  activityRetentionDays: number;
  /** Days an audit event is kept; older ones are purged in the background (AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
  /** Days a finished job, and the generated image of an article deleted for good, are kept (JOB_RETENTION_DAYS). */
  jobRetentionDays: number;
  role: Role;
  /** SIGTERM: how long requests are still served after readiness went false (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number;
  /** SIGTERM: the longest in-flight requests are waited for (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  writer: ProviderConfig;
  image: ProviderConfig;
  logLevel: string;
  migrationsRun: boolean;
  seedDemo: boolean;
  /** The owner of the demo tenant, printed a sign-in link on the first start (DEMO_OWNER_EMAIL). */
  demoOwnerEmail: string;
  /** How people sign in to the consent pages and the console (LOGIN_METHODS). */
  loginMethods: LoginMethod[];
  /** The company's identity provider, when `oidc` is a login method (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET). */
  oidc?: { issuer: string; clientId: string; clientSecret?: string };
  /** `proxy` sign-in: the header naming the signed-in person's email (AUTH_PROXY_USER_HEADER, lower-case). */
  authProxyUserHeader: string;
  /** `proxy` sign-in: the peers whose header is trusted (AUTH_PROXY_TRUSTED_CIDRS); empty unless `proxy` is on. */
  authProxyTrustedCidrs: string[];
  /** The same as a BlockList, to test a peer address with `check()`. */
  authProxyTrusted: BlockList;
  /**
   * Which peers' `X-Forwarded-For` names the client (TRUST_PROXY), as Express's `trust proxy` setting:
   * the client address is the nearest one a peer outside this set added. It keys the per-IP limits.
   * Loopback only by default.
   */
  trustProxy: boolean | number | string[];
  oauth: {
    /** Lifetime of an OAuth access token, seconds (OAUTH_ACCESS_TOKEN_TTL_S). */
    accessTokenTtlS: number;
    /** A refresh token unused this long has expired, seconds (OAUTH_REFRESH_TOKEN_TTL_S). */
    refreshTokenTtlS: number;
    /** How long a rotated refresh token may still be presented by a client refreshing in parallel (OAUTH_REFRESH_REUSE_GRACE_S). */
    refreshReuseGraceS: number;
    /** Client ids that are https URLs (Client ID Metadata Documents) are accepted and advertised (OAUTH_CLIENT_METADATA_DOCUMENTS). */
    clientMetadataDocuments: boolean;
    /** Client ID Metadata Documents may be fetched from private networks (OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS; refused in production). */
    cimdAllowPrivateNetworks: boolean;
    /** How many metadata documents this process fetches at once; past it, 503 (OAUTH_CIMD_MAX_CONCURRENT_FETCHES). */
    cimdMaxConcurrentFetches: number;
    /** Requests per minute per IP on /oauth/authorize, /oauth/register, /oauth/token and /oauth/login, each (OAUTH_IP_RATE_LIMIT_PER_MINUTE). */
    ipRateLimitPerMinute: number;
  };
}

/** The shortest admin token accepted, from ADMIN_TOKEN or from DATA_DIR/admin-token. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** The shortest REQUEST_STATE_SECRET accepted. */
export const MIN_REQUEST_STATE_SECRET_LENGTH = 32;

/** Thrown when the environment holds a value the server cannot start with. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}".`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got "${raw}".`);
  }
  return raw as T;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false; got "${env[name]}".`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL; got "${raw}".`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must be a ${protocols.join(' or ')} URL; got "${raw}".`);
  }
  return raw;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function provider(env: Env, prefix: 'WRITER' | 'IMAGE'): ProviderConfig {
  const kind = oneOf<ProviderKind>(env, `${prefix}_PROVIDER`, 'local', ['local', 'openai']);
  if (kind === 'local') return { kind };
  const baseUrl = url(env, `${prefix}_BASE_URL`, ['http:', 'https:']);
  if (!baseUrl) throw new ConfigError(`${prefix}_BASE_URL is required when ${prefix}_PROVIDER=openai.`);
  return { kind, baseUrl, apiKey: env[`${prefix}_API_KEY`], model: env[`${prefix}_MODEL`] };
}

/** IMAGE_SIZES: a comma list of `WIDTHxHEIGHT`; undefined when unset. */
function imageSizes(env: Env): { width: number; height: number }[] | undefined {
  const entries = list(env, 'IMAGE_SIZES');
  if (!entries.length) return undefined;
  return entries.map((entry) => {
    const match = /^(\d{1,5})x(\d{1,5})$/.exec(entry);
    const [width, height] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
    if (!match || Math.min(width, height) < 16 || Math.max(width, height) > 8192) {
      throw new ConfigError(
        `IMAGE_SIZES must be a comma list of the sizes the image model accepts, each WIDTHxHEIGHT in pixels from 16 to 8192, such as 1024x1024,1536x1024,1024x1536; got "${entry}".`,
      );
    }
    return { width, height };
  });
}

export function loadConfig(env: Env = process.env): AppConfig {
  const nodeEnv = env.NODE_ENV || 'development';
  const production = nodeEnv === 'production';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicUrl = (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long.`);
  }
  if (production && !adminToken) {
    throw new ConfigError('ADMIN_TOKEN is required when NODE_ENV=production.');
  }
  const allowedOrigins = list(env, 'ALLOWED_ORIGINS');
  for (const origin of allowedOrigins) {
    try {
      new URL(origin);
    } catch {
      throw new ConfigError(`ALLOWED_ORIGINS must be a comma list of origins such as https://app.example.com; got "${origin}".`);
    }
  }
  const hosts = list(env, 'ALLOWED_HOSTS');
  const loginMethods = list(env, 'LOGIN_METHODS').map((m) => m.toLowerCase());
  if (!loginMethods.length) loginMethods.push('link');
  for (const method of loginMethods) {
    if (!LOGIN_METHODS.includes(method as LoginMethod))
      throw new ConfigError(`LOGIN_METHODS must be a comma list of ${LOGIN_METHODS.join(', ')}; got "${method}".`);
  }
  const oidcIssuer = url(env, 'OIDC_ISSUER', ['http:', 'https:']);
  if (loginMethods.includes('oidc') && (!oidcIssuer || !env.OIDC_CLIENT_ID)) {
    throw new ConfigError('LOGIN_METHODS includes oidc: set OIDC_ISSUER and OIDC_CLIENT_ID (and OIDC_CLIENT_SECRET for a confidential client).');
  }
  const authProxyTrustedCidrs = loginMethods.includes('proxy') ? list(env, 'AUTH_PROXY_TRUSTED_CIDRS') : [];
  if (loginMethods.includes('proxy') && !authProxyTrustedCidrs.length) {
    throw new ConfigError('LOGIN_METHODS includes proxy: set AUTH_PROXY_TRUSTED_CIDRS to the gateway addresses, such as 10.0.0.0/8 or 127.0.0.1/32.');
  }
  const authProxyTrusted = cidrs(authProxyTrustedCidrs);
  const cimdAllowPrivateNetworks = bool(env, 'OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS', false);
  if (production && cimdAllowPrivateNetworks) {
    throw new ConfigError(
      'OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS=true is refused when NODE_ENV=production: client metadata documents must come from the public internet.',
    );
  }
  const stateSecret = env.REQUEST_STATE_SECRET || undefined;
  if (stateSecret !== undefined && stateSecret.length < MIN_REQUEST_STATE_SECRET_LENGTH) {
    throw new ConfigError(`REQUEST_STATE_SECRET must be at least ${MIN_REQUEST_STATE_SECRET_LENGTH} characters long (e.g. openssl rand -hex 32).`);
  }
  if (production && !stateSecret) {
    throw new ConfigError(
      'REQUEST_STATE_SECRET is required when NODE_ENV=production: the same secret on every instance signs the requestState of 2026-07-28 clients (e.g. openssl rand -hex 32).',
    );
  }
  const image = provider(env, 'IMAGE');
  const sizes = imageSizes(env);
  const logLevel = oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

  return {
    nodeEnv,
    production,
    port,
    host,
    publicUrl,
    databaseUrl,
    dataDir: resolve(env.DATA_DIR || './.data'),
    adminToken,
    allowedOrigins: allowedOrigins.map((o) => new URL(o).origin),
    allowedHosts: hosts.length ? hosts.map((h) => h.toLowerCase()) : undefined,
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 5, 1, 1_000_000),
    rateLimitMaxWaitMs: integer(env, 'RATE_LIMIT_MAX_WAIT_MS', 1_000, 0, 60_000),
    sessionIdleTtlS: integer(env, 'SESSION_IDLE_TTL_S', 86_400, 1, 30 * 86_400),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    syncBudgetMs: integer(env, 'SYNC_BUDGET_MS', 280_000, 0, 300_000),
    syncBudgetSilentMs: integer(env, 'SYNC_BUDGET_SILENT_MS', 45_000, 0, 300_000),
    progressHeartbeatMs: integer(env, 'PROGRESS_HEARTBEAT_MS', 10_000, 100, 10_000),
    taskLeaseMs: integer(env, 'TASK_LEASE_MS', 30_000, 300, 600_000),
    clientRequestTimeoutMs: integer(env, 'CLIENT_REQUEST_TIMEOUT_MS', 180_000, 100, 3_600_000),
    requestStateSecret: stateSecret !== undefined ? Buffer.from(stateSecret, 'utf8') : randomBytes(32),
    requestStateSecretGenerated: stateSecret === undefined,
    jobsMaxQueuedPerAccount: integer(env, 'JOBS_MAX_QUEUED_PER_ACCOUNT', 20, 1, 100_000),
    jobsMaxRunningPerAccount: integer(env, 'JOBS_MAX_RUNNING_PER_ACCOUNT', 2, 1, 1_000),
    localProviderDelayMs: integer(env, 'LOCAL_PROVIDER_DELAY_MS', 0, 0, 600_000),
    articleRevisionsKept: integer(env, 'ARTICLE_REVISIONS_KEPT', 50, 1, 10_000),
    listingCachePages: integer(env, 'LISTING_CACHE_PAGES', 256, 0, 100_000),
    activityRetentionDays: integer(env, 'ACTIVITY_RETENTION_DAYS', 90, 1, 36_500),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 400, 1, 36_500),
    jobRetentionDays: integer(env, 'JOB_RETENTION_DAYS', 30, 1, 36_500),
    role: oneOf<Role>(env, 'ROLE', 'all', ['api', 'worker', 'all']),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 2_000, 0, 120_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 25_000, 1_000, 600_000),
    writer: provider(env, 'WRITER'),
    image: image.kind === 'openai' && sizes ? { ...image, sizes } : image,
    logLevel,
    migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
    // A demo tenant with a printed key has no place on a production database unless asked for.
    seedDemo: bool(env, 'SEED_DEMO', !production),
    demoOwnerEmail: (env.DEMO_OWNER_EMAIL || 'owner@demo.test').toLowerCase(),
    loginMethods: loginMethods as LoginMethod[],
    oidc: loginMethods.includes('oidc') ? { issuer: oidcIssuer!, clientId: env.OIDC_CLIENT_ID!, clientSecret: env.OIDC_CLIENT_SECRET || undefined } : undefined,
    authProxyUserHeader: (env.AUTH_PROXY_USER_HEADER || 'X-Forwarded-Email').toLowerCase(),
    authProxyTrustedCidrs,
    authProxyTrusted,
    trustProxy: trustProxy(env),
    oauth: {
      accessTokenTtlS: integer(env, 'OAUTH_ACCESS_TOKEN_TTL_S', 3_600, 1, 86_400),
      refreshTokenTtlS: integer(env, 'OAUTH_REFRESH_TOKEN_TTL_S', 30 * 86_400, 60, 365 * 86_400),
      refreshReuseGraceS: integer(env, 'OAUTH_REFRESH_REUSE_GRACE_S', 120, 0, 3_600),
      clientMetadataDocuments: bool(env, 'OAUTH_CLIENT_METADATA_DOCUMENTS', true),
      cimdAllowPrivateNetworks,
      cimdMaxConcurrentFetches: integer(env, 'OAUTH_CIMD_MAX_CONCURRENT_FETCHES', 16, 1, 1_000),
      ipRateLimitPerMinute: integer(env, 'OAUTH_IP_RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    },
  };
}

/**
 * Only a gateway on this host out of the box. Trusting whole private ranges would let any client on
 * the same network that reaches the server directly name itself in X-Forwarded-For, and so pick a
 * fresh per-IP bucket at every request: a gateway elsewhere is named by its addresses (README.md#gateways).
 */
const DEFAULT_TRUST_PROXY = ['loopback'];

function trustProxy(env: Env): boolean | number | string[] {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '') return DEFAULT_TRUST_PROXY;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = list(env, 'TRUST_PROXY');
  try {
    proxyAddr.compile(entries);
  } catch {
    throw new ConfigError(
      `TRUST_PROXY must be false, true, a number of proxies, or a comma list of addresses, CIDR ranges and the names loopback, linklocal, uniquelocal; got "${raw}".`,
    );
  }
  return entries;
}

/** `10.0.0.0/8,127.0.0.1,::1/128` as a BlockList (a bare address is its own /32 or /128). */
function cidrs(entries: string[]): BlockList {
  const block = new BlockList();
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (
      !family ||
      extra !== undefined ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > (family === 6 ? 128 : 32) ||
      (bits !== undefined && !/^\d+$/.test(bits))
    ) {
      throw new ConfigError(`AUTH_PROXY_TRUSTED_CIDRS must be a comma list of addresses or CIDR ranges such as 10.0.0.0/8; got "${entry}".`);
    }
    block.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return block;
}
