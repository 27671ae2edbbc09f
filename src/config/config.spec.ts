import { loadConfig } from './config.js';

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
  it('defaults: link sign-in, the contract TTLs, private networks refused for metadata documents', () => {
    const config = loadConfig({});
    expect(config.loginMethods).toEqual(['link']);
    expect(config.oidc).toBeUndefined();
    expect(config.authProxyUserHeader).toBe('x-forwarded-email');
    expect(config.oauth).toEqual({ accessTokenTtlS: 3600, refreshTokenTtlS: 30 * 86_400, refreshReuseGraceS: 120, cimdAllowPrivateNetworks: false, ipRateLimitPerMinute: 60 });
    expect(config.demoOwnerEmail).toBe('owner@demo.test');
  });

  it('LOGIN_METHODS takes a comma list of link, oidc and proxy, and names a wrong one', () => {
    expect(() => loadConfig({ LOGIN_METHODS: 'link,password' })).toThrow('LOGIN_METHODS must be a comma list of link, oidc, proxy; got "password".');
    expect(loadConfig({ LOGIN_METHODS: ' Link , proxy', AUTH_PROXY_TRUSTED_CIDRS: '10.0.0.0/8' }).loginMethods).toEqual(['link', 'proxy']);
  });

  it('oidc needs its issuer and client id', () => {
    expect(() => loadConfig({ LOGIN_METHODS: 'oidc' })).toThrow(/set OIDC_ISSUER and OIDC_CLIENT_ID/);
    expect(() => loadConfig({ LOGIN_METHODS: 'oidc', OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'x' })).toThrow('OIDC_ISSUER must be a URL; got "not a url".');
    expect(loadConfig({ LOGIN_METHODS: 'oidc', OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'reblog' }).oidc).toEqual({ issuer: 'https://idp.example.com', clientId: 'reblog', clientSecret: undefined });
  });

  it('TRUST_PROXY: private networks by default; false, true, a hop count or a list; a wrong entry is named', () => {
    expect(loadConfig({}).trustProxy).toEqual(['loopback', 'linklocal', 'uniquelocal']);
    expect(loadConfig({ TRUST_PROXY: ' ' }).trustProxy).toEqual(['loopback', 'linklocal', 'uniquelocal']);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback, fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback', 'fd00::/8']);
    for (const bad of ['gateway', '10.0.0.0/33', 'yes', '-1']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(`TRUST_PROXY must be false, true, a number of proxies, or a comma list of addresses, CIDR ranges and the names loopback, linklocal, uniquelocal; got "${bad}".`);
    }
  });

  it('proxy needs the trusted peers, as addresses or CIDR ranges, and trusts only those', () => {
    expect(() => loadConfig({ LOGIN_METHODS: 'proxy' })).toThrow(/set AUTH_PROXY_TRUSTED_CIDRS/);
    for (const bad of ['10.0.0.0/33', 'gateway', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      expect(() => loadConfig({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: bad })).toThrow(`AUTH_PROXY_TRUSTED_CIDRS must be a comma list of addresses or CIDR ranges such as 10.0.0.0/8; got "${bad}".`);
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
