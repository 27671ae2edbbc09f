import { expectError, call } from '../admin/admin-helpers.js';
import { withClient } from '../support/database.js';
import { admin, newAccount } from '../support/fixtures.js';
import { TestIdp } from '../support/test-idp.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The registry of identity providers through the admin API (docs/admin-api.md#identity-providers):
// discovery against a test provider on 127.0.0.1, the answers, the refusals, the audit trail.
describe('identity providers (admin API)', () => {
  let t: TestApp;
  let idp: TestIdp;
  let accountId: string;
  const path = (account = accountId) => `/admin/v1/accounts/${account}/identity-providers`;

  beforeAll(async () => {
    idp = await TestIdp.start();
    t = await startTestApp({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  beforeEach(async () => {
    accountId = (await newAccount(t)).id;
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('creates one after fetching its discovery document and keys; lists, reads, changes and removes it, each an audit event', async () => {
    const created = await admin(t, 'post', path(), { issuer: idp.issuer, oidc_client_id: 'reblog', oidc_client_secret: 's3cret-value' }, 201);
    expect(created).toEqual({
      id: expect.any(String),
      account_id: accountId,
      issuer: idp.issuer,
      person_claim: 'email',
      unknown_people: 'refuse',
      oidc_client_id: 'reblog',
      oidc_client_secret_set: true,
      jwks_uri: `${idp.issuer}/jwks`,
      key_ids: [idp.published[0].kid],
      jwks_fetched_at: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(created)).not.toContain('s3cret-value');
    expect(await admin(t, 'get', path(), undefined, 200)).toEqual({ items: [created] });
    expect(await admin(t, 'get', `${path()}/${created.id}`, undefined, 200)).toEqual(created);

    const changed = await admin(t, 'patch', `${path()}/${created.id}`, { person_claim: 'sub', unknown_people: 'add', oidc_client_secret: null }, 200);
    expect(changed).toMatchObject({ person_claim: 'sub', unknown_people: 'add', oidc_client_id: 'reblog', oidc_client_secret_set: false });

    await admin(t, 'delete', `${path()}/${created.id}`, undefined, 204);
    expectError(await call(t, 'get', `${path()}/${created.id}`), 404, 'not_found');
    expect(await admin(t, 'get', path(), undefined, 200)).toEqual({ items: [] });

    const trail = await admin(t, 'get', `/admin/v1/accounts/${accountId}/audit`, undefined, 200);
    const acts = trail.items.filter((e: any) => e.action.startsWith('identity_provider.')).reverse();
    expect(acts.map((e: any) => [e.action, e.actor_type, e.target.identity_provider_id])).toEqual([
      ['identity_provider.created', 'operator', created.id],
      ['identity_provider.updated', 'operator', created.id],
      ['identity_provider.removed', 'operator', created.id],
    ]);
    expect(acts[1].change.before).toMatchObject({ person_claim: 'email', oidc_client_secret_set: true });
    expect(acts[1].change.after).toMatchObject({ person_claim: 'sub', oidc_client_secret_set: false });
    expect(JSON.stringify(trail)).not.toContain('s3cret-value');
    // Removed: the row is gone.
    const stored = await withClient(t.config.databaseUrl!, (c) => c.query(`SELECT count(*)::int AS n FROM identity_providers WHERE id = $1`, [created.id]));
    expect(stored.rows[0].n).toBe(0);
  });

  it('answers 404 for another account’s provider, on every verb', async () => {
    const created = await admin(t, 'post', path(), { issuer: idp.issuer }, 201);
    const other = (await newAccount(t)).id;
    expectError(await call(t, 'get', `${path(other)}/${created.id}`), 404, 'not_found');
    expectError(await call(t, 'patch', `${path(other)}/${created.id}`, { person_claim: 'sub' }), 404, 'not_found');
    expectError(await call(t, 'delete', `${path(other)}/${created.id}`), 404, 'not_found');
    expect(await admin(t, 'get', path(other), undefined, 200)).toEqual({ items: [] });
    expectError(await call(t, 'get', path('00000000-0000-4000-8000-000000000000')), 404, 'not_found');
    expect(await admin(t, 'get', `${path()}/${created.id}`, undefined, 200)).toMatchObject({ person_claim: 'email' });
  });

  it('refuses the same issuer twice in one account (409), and takes it in another', async () => {
    await admin(t, 'post', path(), { issuer: idp.issuer }, 201);
    expectError(await call(t, 'post', path(), { issuer: idp.issuer }), 409, 'conflict');
    await admin(t, 'post', path((await newAccount(t)).id), { issuer: idp.issuer }, 201);
  });

  it.each([
    ['no issuer', {}, 400, 'validation_failed'],
    ['an unknown person_claim', { person_claim: 'upn' }, 400, 'validation_failed'],
    ['an unknown unknown_people', { unknown_people: 'invite' }, 400, 'validation_failed'],
    ['plain http to a host that is not loopback', { issuer: 'http://idp.example.com' }, 400, 'validation_failed'],
    ['an issuer with a query', { issuer: 'https://idp.example.com/?tenant=1' }, 400, 'validation_failed'],
    ['an issuer that is no URL', { issuer: 'acme-okta' }, 400, 'validation_failed'],
  ])('refuses %s', async (_what, body, status, code) => {
    expectError(await call(t, 'post', path(), body), status, code);
  });

  it('answers 422 in one sentence when the discovery fails, and stores nothing', async () => {
    // No discovery document at this path (both the OIDC and the RFC 8414 locations answer 404).
    const missing = expectError(await call(t, 'post', path(), { issuer: `${idp.issuer}/tenant-x` }), 422, 'unprocessable');
    expect(missing.message).toMatch(/^The discovery document of .*\/tenant-x could not be fetched \(.*answered 404.*\)\.$/);
    // A document that names another issuer.
    idp.overrides.set('/other/.well-known/openid-configuration', (_q, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ issuer: 'https://evil.example', jwks_uri: `${idp.issuer}/jwks` })),
    );
    const mismatch = expectError(await call(t, 'post', path(), { issuer: `${idp.issuer}/other` }), 422, 'unprocessable');
    expect(mismatch.message).toMatch(/names the issuer "https:\/\/evil.example"; it must be exactly the issuer entered\.$/);
    // Keys that are no key set.
    idp.overrides.set('/bad-keys/.well-known/openid-configuration', (_q, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ issuer: `${idp.issuer}/bad-keys`, jwks_uri: `${idp.issuer}/nokeys` })),
    );
    idp.overrides.set('/nokeys', (_q, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"k":[]}'));
    const keys = expectError(await call(t, 'post', path(), { issuer: `${idp.issuer}/bad-keys` }), 422, 'unprocessable');
    expect(keys.message).toMatch(/are not a JSON Web Key Set/);
    expect(await admin(t, 'get', path(), undefined, 200)).toEqual({ items: [] });
  });

  it('takes keys past 5 KiB (a real provider’s certificate chains), up to 64 KiB', async () => {
    const withKeys = (path: string, padding: number) => {
      idp.overrides.set(`/${path}/.well-known/openid-configuration`, (_q, res) =>
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ issuer: `${idp.issuer}/${path}`, jwks_uri: `${idp.issuer}/${path}/keys` })),
      );
      idp.overrides.set(`/${path}/keys`, (_q, res) =>
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [{ ...idp.published[0].jwk, x5c: ['A'.repeat(padding)] }] })),
      );
    };
    withKeys('ten-k', 10 * 1024);
    await admin(t, 'post', path(), { issuer: `${idp.issuer}/ten-k` }, 201);
    withKeys('huge', 70 * 1024);
    const error = expectError(await call(t, 'post', path(), { issuer: `${idp.issuer}/huge` }), 422, 'unprocessable');
    expect(error.message).toMatch(/could not be fetched: it is larger than 65536 bytes\.$/);
  });

  it('falls back to the RFC 8414 document when there is no OpenID one', async () => {
    const issuer = `${idp.issuer}/as`;
    idp.overrides.set('/.well-known/oauth-authorization-server/as', (_q, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ issuer, jwks_uri: `${idp.issuer}/jwks` })),
    );
    const created = await admin(t, 'post', path(), { issuer }, 201);
    expect(created).toMatchObject({ issuer, jwks_uri: `${idp.issuer}/jwks` });
  });

  it('a new issuer in a PATCH is discovered again (and refused with 422 when it cannot be)', async () => {
    const created = await admin(t, 'post', path(), { issuer: idp.issuer }, 201);
    expectError(await call(t, 'patch', `${path()}/${created.id}`, { issuer: `${idp.issuer}/nowhere` }), 422, 'unprocessable');
    expect(await admin(t, 'get', `${path()}/${created.id}`, undefined, 200)).toMatchObject({ issuer: idp.issuer });
  });
});

describe('identity providers: the loopback exception needs OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS', () => {
  let t: TestApp;
  let idp: TestIdp;
  beforeAll(async () => {
    idp = await TestIdp.start();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('refuses a plain-http loopback issuer by default', async () => {
    const accountId = (await newAccount(t)).id;
    const error = expectError(await call(t, 'post', `/admin/v1/accounts/${accountId}/identity-providers`, { issuer: idp.issuer }), 400, 'validation_failed');
    expect(error.message).toBe(`The issuer "${idp.issuer}" cannot be used: it is not an https URL.`);
    expect(idp.requests).toEqual([]);
  });
});
