import { ConfigError, loadConfig } from './config.js';

const PRODUCTION = { NODE_ENV: 'production', ADMIN_TOKEN: 'a-production-admin-token' };

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

  it('refuses CONFORMANCE_FIXTURES=true in production with a sentence naming it', () => {
    expect(() => loadConfig({ ...PRODUCTION, CONFORMANCE_FIXTURES: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...PRODUCTION, CONFORMANCE_FIXTURES: 'true' })).toThrow(/^CONFORMANCE_FIXTURES=true .* refused when NODE_ENV=production\.$/);
    expect(loadConfig({ ...PRODUCTION, CONFORMANCE_FIXTURES: 'false' }).conformanceFixtures).toBe(false);
    expect(loadConfig({ CONFORMANCE_FIXTURES: 'true' }).conformanceFixtures).toBe(true);
  });
});
