import { startTestApp, type TestApp } from '../support/test-app.js';
import { admin, createTenant } from '../support/fixtures.js';

describe('admin API (smoke)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a tenant with a key whose secret is shown once', async () => {
    const tenant = await createTenant(t, { projects: 2 });
    expect(tenant.key).toMatch(/^rbk_/);
    const list = await admin(t, 'get', `/admin/v1/accounts/${tenant.accountId}/api-keys`, undefined, 200);
    expect(list.items).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(tenant.key);
  });
});
