import proxyAddr from 'proxy-addr';
import { loadConfig } from './config.js';
// The official MCP SDK client's default request timeout, after which it cancels the call.
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';

const PRODUCTION = { NODE_ENV: 'production', ADMIN_TOKEN: 'a-production-admin-token', REQUEST_STATE_SECRET: 's'.repeat(32) };

describe('loadConfig: production defaults and refusals', () => {
  it('seeds the demo tenant by default outside production only', () => {
    expect(loadConfig({}).seedDemo).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).seedDemo).toBe(true);
    expect(loadConfig(PRODUCTION).seedDemo).toBe(false);
  });

  it('SEED_DEMO set explicitly wins in every environment', () => {
    expect(loadConfig({ ...PRODUCTION, SEED_DEMO: 'true' }).seedDemo).toBe(true);
    expect(loadConfig({ SEED_DEMO: 'false' }).seedDemo).toBe(false);
  });
});

describe('loadConfig: sign-in and OAuth settings', () => {
  it('defaults: link sign-in, the documented token lifetimes, private networks refused for metadata documents', () => {
    const config = loadConfig({});
    expect(config.loginMethods).toEqual(['link']);
    expect(config.oidc).toBeUndefined();
    expect(config.authProxyUserHeader).toBe('x-forwarded-email');
    expect(config.oauth).toEqual({
      accessTokenTtlS: 3600,
      refreshTokenTtlS: 30 * 86_400,
      refreshReuseGraceS: 120,
      clientMetadataDocuments: true,
      cimdAllowPrivateNetworks: false,
      cimdMaxConcurrentFetches: 16,
      ipRateLimitPerMinute: 60,
    });
    expect(config.demoOwnerEmail).toBe('owner@demo.test');
  });

  it('LOGIN_METHODS takes a comma list of link, oidc and proxy, and names a wrong one', () => {
    expect(() => loadConfig({ LOGIN_METHODS: 'link,password' })).toThrow('LOGIN_METHODS must be a comma list of link, oidc, proxy; got "password".');
    expect(loadConfig({ LOGIN_METHODS: ' Link , proxy', AUTH_PROXY_TRUSTED_CIDRS: '10.0.0.0/8' }).loginMethods).toEqual(['link', 'proxy']);
  });

  it('oidc needs its issuer and client id', () => {
    expect(() => loadConfig({ LOGIN_METHODS: 'oidc' })).toThrow(/set OIDC_ISSUER and OIDC_CLIENT_ID/);
    expect(() => loadConfig({ LOGIN_METHODS: 'oidc', OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'x' })).toThrow('OIDC_ISSUER must be a URL; got "not a url".');
    expect(loadConfig({ LOGIN_METHODS: 'oidc', OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'reblog' }).oidc).toEqual({
      issuer: 'https://idp.example.com',
      clientId: 'reblog',
      clientSecret: undefined,
    });
  });

  it('TRUST_PROXY: loopback by default; false, true, a hop count or a list; a wrong entry is named', () => {
    expect(loadConfig({}).trustProxy).toEqual(['loopback']);
    expect(loadConfig({ TRUST_PROXY: ' ' }).trustProxy).toEqual(['loopback']);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback, fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback', 'fd00::/8']);
    for (const bad of ['gateway', '10.0.0.0/33', 'yes', '-1']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(
        `TRUST_PROXY must be false, true, a number of proxies, or a comma list of addresses, CIDR ranges and the names loopback, linklocal, uniquelocal; got "${bad}".`,
      );
    }
  });

  it('TRUST_PROXY by default trusts a peer on this host only, not one elsewhere on a private network', () => {
    // The setting as Express compiles it (proxy-addr); the addresses are only compared, never contacted.
    const trusted = proxyAddr.compile(loadConfig({}).trustProxy as string[]);
    for (const peer of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) expect([peer, trusted(peer, 0)]).toEqual([peer, true]);
    for (const peer of ['10.1.2.3', '172.16.0.9', '192.168.7.8', '169.254.3.4', 'fd00::5', 'fe80::7', '::ffff:10.1.2.3', '203.0.113.7']) {
      expect([peer, trusted(peer, 0)]).toEqual([peer, false]);
    }
    const gateway = proxyAddr.compile(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy as string[]);
    expect([gateway('10.1.2.3', 0), gateway('192.168.7.8', 0), gateway('127.0.0.1', 0)]).toEqual([true, false, false]);
  });

  it('proxy needs the trusted peers, as addresses or CIDR ranges, and trusts only those', () => {
    expect(() => loadConfig({ LOGIN_METHODS: 'proxy' })).toThrow(/set AUTH_PROXY_TRUSTED_CIDRS/);
    for (const bad of ['10.0.0.0/33', 'gateway', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      expect(() => loadConfig({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: bad })).toThrow(
        `AUTH_PROXY_TRUSTED_CIDRS must be a comma list of addresses or CIDR ranges such as 10.0.0.0/8; got "${bad}".`,
      );
    }
    const trusted = loadConfig({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: '10.1.0.0/16, 127.0.0.1, fd00::/8' }).authProxyTrusted;
    expect(trusted.check('10.1.200.3', 'ipv4')).toBe(true);
    expect(trusted.check('10.2.0.1', 'ipv4')).toBe(false);
    expect(trusted.check('127.0.0.1', 'ipv4')).toBe(true);
    expect(trusted.check('127.0.0.2', 'ipv4')).toBe(false);
    expect(trusted.check('fd12::1', 'ipv6')).toBe(true);
  });

  it('OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS=true is refused in production', () => {
    expect(loadConfig({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' }).oauth.cimdAllowPrivateNetworks).toBe(true);
    expect(() => loadConfig({ ...PRODUCTION, OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' })).toThrow(/refused when NODE_ENV=production/);
  });

  it('OAUTH_CLIENT_METADATA_DOCUMENTS switches metadata documents off; OAUTH_CIMD_MAX_CONCURRENT_FETCHES is bounded', () => {
    expect(loadConfig({ OAUTH_CLIENT_METADATA_DOCUMENTS: 'false' }).oauth.clientMetadataDocuments).toBe(false);
    expect(() => loadConfig({ OAUTH_CLIENT_METADATA_DOCUMENTS: 'maybe' })).toThrow(/OAUTH_CLIENT_METADATA_DOCUMENTS/);
    expect(loadConfig({ OAUTH_CIMD_MAX_CONCURRENT_FETCHES: '2' }).oauth.cimdMaxConcurrentFetches).toBe(2);
    expect(() => loadConfig({ OAUTH_CIMD_MAX_CONCURRENT_FETCHES: '0' })).toThrow(
      'OAUTH_CIMD_MAX_CONCURRENT_FETCHES must be a whole number from 1 to 1000; got "0".',
    );
  });

  it('token lifetimes are bounded', () => {
    expect(() => loadConfig({ OAUTH_ACCESS_TOKEN_TTL_S: '0' })).toThrow('OAUTH_ACCESS_TOKEN_TTL_S must be a whole number from 1 to 86400; got "0".');
    expect(() => loadConfig({ OAUTH_REFRESH_REUSE_GRACE_S: '-1' })).toThrow(/OAUTH_REFRESH_REUSE_GRACE_S must be a whole number from 0/);
  });
});

describe('loadConfig: REQUEST_STATE_SECRET', () => {
  it('is required in production, with a sentence saying how to make one', () => {
    const { REQUEST_STATE_SECRET: _, ...withoutSecret } = PRODUCTION;
    expect(() => loadConfig(withoutSecret)).toThrow('REQUEST_STATE_SECRET is required when NODE_ENV=production');
  });

  it('refuses a short one in every environment', () => {
    expect(() => loadConfig({ REQUEST_STATE_SECRET: 'short' })).toThrow('REQUEST_STATE_SECRET must be at least 32 characters long');
    expect(() => loadConfig({ ...PRODUCTION, REQUEST_STATE_SECRET: 'x'.repeat(31) })).toThrow('at least 32 characters');
  });

  it('is the configured value when set, the same for every instance', () => {
    const secret = 'k'.repeat(40);
    const a = loadConfig({ REQUEST_STATE_SECRET: secret });
    const b = loadConfig({ ...PRODUCTION, REQUEST_STATE_SECRET: secret });
    expect(a.requestStateSecret.equals(Buffer.from(secret))).toBe(true);
    expect(b.requestStateSecret.equals(a.requestStateSecret)).toBe(true);
    expect(a.requestStateSecretGenerated).toBe(false);
  });

  it('outside production, unset: a random one per process, flagged as generated', () => {
    const a = loadConfig({});
    const b = loadConfig({ NODE_ENV: 'test' });
    expect(a.requestStateSecretGenerated).toBe(true);
    expect(a.requestStateSecret.length).toBe(32);
    expect(a.requestStateSecret.equals(b.requestStateSecret)).toBe(false);
  });
});

describe('loadConfig: the rate limit', () => {
  it('RATE_LIMIT_MAX_WAIT_MS: 1000 by default, 0 refuses at once, a wrong value is named', () => {
    expect(loadConfig({}).rateLimitMaxWaitMs).toBe(1_000);
    expect(loadConfig({ RATE_LIMIT_MAX_WAIT_MS: '0' }).rateLimitMaxWaitMs).toBe(0);
    expect(loadConfig({ RATE_LIMIT_MAX_WAIT_MS: '2500' }).rateLimitMaxWaitMs).toBe(2_500);
    expect(() => loadConfig({ RATE_LIMIT_MAX_WAIT_MS: '-1' })).toThrow('RATE_LIMIT_MAX_WAIT_MS must be a whole number from 0 to 60000; got "-1".');
    expect(() => loadConfig({ RATE_LIMIT_MAX_WAIT_MS: '1s' })).toThrow('RATE_LIMIT_MAX_WAIT_MS must be a whole number from 0 to 60000; got "1s".');
  });
});

describe('loadConfig: LISTING_CACHE_PAGES', () => {
  it('keeps 256 listing pages by default, none with 0, up to 100000, and names a wrong value', () => {
    expect(loadConfig({}).listingCachePages).toBe(256);
    expect(loadConfig({ LISTING_CACHE_PAGES: '0' }).listingCachePages).toBe(0);
    expect(loadConfig({ LISTING_CACHE_PAGES: '100000' }).listingCachePages).toBe(100_000);
    for (const bad of ['-1', '100001', 'many', '1.5']) {
      expect(() => loadConfig({ LISTING_CACHE_PAGES: bad })).toThrow(`LISTING_CACHE_PAGES must be a whole number from 0 to 100000; got "${bad}".`);
    }
  });
});

describe('loadConfig: ARTICLE_REVISIONS_KEPT', () => {
  it('keeps 50 revisions per article by default, any number from 1 to 10000 when set, and names a wrong value', () => {
    expect(loadConfig({}).articleRevisionsKept).toBe(50);
    expect(loadConfig({ ARTICLE_REVISIONS_KEPT: '3' }).articleRevisionsKept).toBe(3);
    for (const bad of ['0', '-1', '10001', 'all', '2.5']) {
      expect(() => loadConfig({ ARTICLE_REVISIONS_KEPT: bad })).toThrow(`ARTICLE_REVISIONS_KEPT must be a whole number from 1 to 10000; got "${bad}".`);
    }
  });
});

describe('loadConfig: retention', () => {
  it('keeps activity 90 days, audit events 400 and finished jobs 30 by default, any number of days from 1 to 36500 when set, and names a wrong value', () => {
    const defaults = loadConfig({});
    expect([defaults.activityRetentionDays, defaults.auditRetentionDays, defaults.jobRetentionDays]).toEqual([90, 400, 30]);
    const set = loadConfig({ ACTIVITY_RETENTION_DAYS: '7', AUDIT_RETENTION_DAYS: '3650', JOB_RETENTION_DAYS: '1' });
    expect([set.activityRetentionDays, set.auditRetentionDays, set.jobRetentionDays]).toEqual([7, 3650, 1]);
    for (const name of ['ACTIVITY_RETENTION_DAYS', 'AUDIT_RETENTION_DAYS', 'JOB_RETENTION_DAYS']) {
      for (const bad of ['0', '-1', '36501', 'forever', '1.5']) {
        expect(() => loadConfig({ [name]: bad })).toThrow(`${name} must be a whole number from 1 to 36500; got "${bad}".`);
      }
    }
  });
});

describe('loadConfig: IMAGE_SIZES', () => {
  const OPENAI = { IMAGE_PROVIDER: 'openai', IMAGE_BASE_URL: 'http://127.0.0.1:9/v1' };

  it('is a comma list of WIDTHxHEIGHT sizes, kept for the openai image provider', () => {
    expect(loadConfig({ ...OPENAI, IMAGE_SIZES: '1024x1024, 1344x768,768x1344' }).image.sizes).toEqual([
      { width: 1024, height: 1024 },
      { width: 1344, height: 768 },
      { width: 768, height: 1344 },
    ]);
    expect(loadConfig(OPENAI).image.sizes).toBeUndefined();
    expect(loadConfig({ IMAGE_SIZES: '1024x1024' }).image).toEqual({ kind: 'local' });
  });

  it('names a wrong entry in a sentence, whichever the provider', () => {
    for (const bad of ['1024', '1024*1024', '1024x', 'x768', '8x8', '9000x1024', '1024x1024x2', 'square']) {
      expect(() => loadConfig({ ...OPENAI, IMAGE_SIZES: `1024x1024,${bad}` })).toThrow(
        `IMAGE_SIZES must be a comma list of the sizes the image model accepts, each WIDTHxHEIGHT in pixels from 16 to 8192, such as 1024x1024,1536x1024,1024x1536; got "${bad}".`,
      );
    }
    expect(() => loadConfig({ IMAGE_SIZES: 'big' })).toThrow(/^IMAGE_SIZES must be/);
  });
});

describe("loadConfig: how long a job tool's call waits", () => {
  it('production defaults: a silent call answers before the official SDK client gives up (60 s), a kept-alive one hears from the server sooner than that', () => {
    const config = loadConfig(PRODUCTION);
    expect(DEFAULT_REQUEST_TIMEOUT_MSEC).toBe(60_000);
    expect(config.syncBudgetSilentMs).toBe(45_000);
    expect(config.syncBudgetSilentMs).toBeLessThan(DEFAULT_REQUEST_TIMEOUT_MSEC);
    expect(config.progressHeartbeatMs).toBe(10_000);
    expect(config.progressHeartbeatMs).toBeLessThan(DEFAULT_REQUEST_TIMEOUT_MSEC);
    // Inside the 300-second connection limit of the gateway the product is built for.
    expect(config.syncBudgetMs).toBe(280_000);
    expect(config.syncBudgetMs).toBeLessThan(300_000);
  });

  it('each is set on its own; the heartbeat is at most 10 s, and a bad value is named', () => {
    const config = loadConfig({ SYNC_BUDGET_MS: '0', SYNC_BUDGET_SILENT_MS: '1000', PROGRESS_HEARTBEAT_MS: '300' });
    expect([config.syncBudgetMs, config.syncBudgetSilentMs, config.progressHeartbeatMs]).toEqual([0, 1000, 300]);
    expect(() => loadConfig({ PROGRESS_HEARTBEAT_MS: '15000' })).toThrow('PROGRESS_HEARTBEAT_MS must be a whole number from 100 to 10000; got "15000".');
    expect(() => loadConfig({ SYNC_BUDGET_SILENT_MS: '-1' })).toThrow('SYNC_BUDGET_SILENT_MS must be a whole number from 0 to 300000; got "-1".');
  });
});
