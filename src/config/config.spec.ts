import { loadConfig } from './config.js';

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
});
