import { call, expectError } from '../admin/admin-helpers.js';
import { eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, ISO, newAccount, newProject } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

/** Well under the principal cache's 3 s: a change seen within it was told, not waited out. */
const SOON = 1_000;

describe('admin API: grants of people (source, user, client, revoked_reason)', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let accountId: string;
  let projectId: string;
  let userId: string;

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
    accountId = (await newAccount(a)).id;
    projectId = (await newProject(a, accountId)).id;
    userId = (await newUser(a)).id;
    await addAccountMember(a, accountId, userId, 'member');
    await addProjectMember(a, accountId, projectId, userId, 'editor');
  });
  afterAll(() => db?.drop());

  const grants = async () => (await admin(a, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200)).items as any[];
  const ping = (t: TestApp, token: string) => rpc(t, token, { jsonrpc: '2.0', id: 1, method: 'ping' });

  it('an admin-made grant carries source "admin" and no person or client, when created and when listed', async () => {
    const created = await admin(
      a,
      'post',
      `/admin/v1/accounts/${accountId}/grants`,
      { client_name: 'Provisioned', scopes: ['read'], projects: [{ project_id: projectId, role: 'viewer' }] },
      201,
    );
    expect(created).toMatchObject({ source: 'admin', user_id: null, client_id: null, revoked_reason: null });
    expect((await grants()).find((g) => g.id === created.id)).toMatchObject({
      client_name: 'Provisioned',
      source: 'admin',
      user_id: null,
      client_id: null,
      revoked_reason: null,
      revoked_at: null,
    });
  });

  it('an OAuth grant is listed with source "oauth", its person and client, its client\'s name and no expiry', async () => {
    const client = await newClient(a, { client_name: 'Claude' });
    const grant = await oauthGrant(a, {
      accountId,
      userId,
      clientId: client.client_id,
      clientName: 'Name at consent',
      projects: [{ project_id: projectId, role: 'editor' }],
      scopes: ['read', 'write'],
      ttlS: 600,
    });
    const listed = (await grants()).find((g) => g.id === grant.id);
    expect(listed).toEqual({
      id: grant.id,
      client_name: 'Claude',
      token_prefix: grant.token.slice(0, 12),
      scopes: ['read', 'write'],
      projects: [{ project_id: projectId, role: 'editor' }],
      expires_at: null,
      revoked_at: null,
      created_at: expect.stringMatching(ISO),
      source: 'oauth',
      user_id: userId,
      client_id: client.client_id,
      revoked_reason: null,
      via: 'consent',
    });
    expect(JSON.stringify(await grants())).not.toContain(grant.token);

    // A renamed client (a refetched metadata document) is shown by its new name.
    await withClient(db.url, (c) => c.query(`UPDATE oauth_clients SET client_name = 'Claude Desktop' WHERE id = $1`, [client.client_id]));
    expect((await grants()).find((g) => g.id === grant.id).client_name).toBe('Claude Desktop');
    // A client that is gone leaves the name the grant was made with.
    await withClient(db.url, (c) => c.query(`DELETE FROM oauth_clients WHERE id = $1`, [client.client_id]));
    expect((await grants()).find((g) => g.id === grant.id)).toMatchObject({ client_name: 'Name at consent', client_id: client.client_id });
  });

  it('shows why a grant was revoked', async () => {
    const client = await newClient(a);
    const grant = await oauthGrant(a, { accountId, userId, clientId: client.client_id, projects: [{ project_id: projectId, role: 'viewer' }] });
    await withClient(db.url, (c) => c.query(`UPDATE credentials SET revoked_at = now(), revoked_reason = 'refresh_token_reuse' WHERE id = $1`, [grant.id]));
    expect((await grants()).find((g) => g.id === grant.id)).toMatchObject({ revoked_at: expect.stringMatching(ISO), revoked_reason: 'refresh_token_reuse' });
    // An admin DELETE of a revoked grant keeps the first revocation and its reason.
    expect((await call(a, 'delete', `/admin/v1/grants/${grant.id}`)).status).toBe(204);
    expect((await grants()).find((g) => g.id === grant.id)).toMatchObject({ revoked_reason: 'refresh_token_reuse' });
  });

  it('an admin DELETE of an OAuth grant sets revoked_reason "admin" and refuses its token at once on every instance', async () => {
    const client = await newClient(a);
    const grant = await oauthGrant(a, { accountId, userId, clientId: client.client_id, projects: [{ project_id: projectId, role: 'editor' }] });
    const other = await oauthGrant(a, { accountId, userId, clientId: client.client_id, projects: [{ project_id: projectId, role: 'editor' }] });
    // Cached by both instances now.
    expect((await ping(a, grant.token)).status).toBe(200);
    expect((await ping(b, grant.token)).status).toBe(200);
    expect((await ping(b, other.token)).status).toBe(200);

    expect((await call(a, 'delete', `/admin/v1/grants/${grant.id}`)).status).toBe(204);
    expect((await grants()).find((g) => g.id === grant.id)).toMatchObject({ revoked_at: expect.stringMatching(ISO), revoked_reason: 'admin' });
    expect((await ping(a, grant.token)).status).toBe(401);
    await eventually(
      () => ping(b, grant.token),
      (res) => res.status === 401,
      SOON,
      20,
    );
    // Only that grant: another of the same person and client still works.
    expect((await ping(b, other.token)).status).toBe(200);
  });

  it('an admin DELETE of an admin-made grant sets revoked_reason "admin"', async () => {
    const created = await admin(a, 'post', `/admin/v1/accounts/${accountId}/grants`, { client_name: 'g', scopes: ['read'], projects: [] }, 201);
    expect((await call(a, 'delete', `/admin/v1/grants/${created.id}`)).status).toBe(204);
    expect((await grants()).find((g) => g.id === created.id)).toMatchObject({
      source: 'admin',
      revoked_reason: 'admin',
      revoked_at: expect.stringMatching(ISO),
    });
    expectError(await call(a, 'delete', `/admin/v1/grants/${projectId}`), 404, 'not_found');
  });
});
