import pg from 'pg';
import { PRINCIPAL_TTL_MS } from '../../src/auth/principal.resolver.js';
import { CredentialsService } from '../../src/auth/credentials.service.js';
import { CACHE_CHANNEL } from '../../src/database/notifications.service.js';
import { eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, createTenant, newAccount, newKey, newProject, withRole } from '../support/fixtures.js';
import { callTool, rpc } from '../support/mcp-client.js';
import { connectByOAuth, consentingPerson, newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

/**
 * No caller has to remember to tell the instances that what a credential may do changed: the
 * database does, at commit (docs/architecture.md#layers: the principal-change triggers). Each change below is
 * made with plain SQL, on a connection of its own, as an operator's script would, so no service of the
 * app runs; both instances (each caching the principal first) must refuse or narrow it within `SOON`,
 * well under the cache's lifetime, so a change noticed only on expiry fails.
 */
const SOON = 1_000;

describe('a change to what a credential may do reaches every instance, whoever made it', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
  });
  afterAll(() => db?.drop());

  const sql = (text: string, params: unknown[] = []) => withClient(db.url, (c) => c.query(text, params));
  const list = (t: TestApp, token: string) => rpc(t, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const toolNames = (res: { status: number; body: any }) => (res.status === 200 ? (res.body.result.tools as { name: string }[]).map((tool) => tool.name) : []);
  const soon = <T>(read: () => Promise<T>, done: (value: T) => boolean) => eventually(read, done, SOON, 20);
  /** Both instances answer `token` with 200 (so both cached its principal). */
  const cachedOnBoth = async (token: string) => {
    for (const t of [a, b]) expect((await list(t, token)).status).toBe(200);
  };

  /** A person with an OAuth grant reaching P1 (editor) and P2 (viewer) of a new account. */
  async function personWithGrant() {
    const accountId = (await newAccount(a)).id;
    const p1 = (await newProject(a, accountId, 'P1')).id;
    const p2 = (await newProject(a, accountId, 'P2')).id;
    const user = await newUser(a);
    await addAccountMember(a, accountId, user.id, 'member');
    await addProjectMember(a, accountId, p1, user.id, 'editor');
    await addProjectMember(a, accountId, p2, user.id, 'viewer');
    const client = await newClient(a);
    const grant = await oauthGrant(a, {
      accountId,
      userId: user.id,
      clientId: client.client_id,
      projects: [
        { project_id: p1, role: 'editor' },
        { project_id: p2, role: 'viewer' },
      ],
    });
    return { accountId, p1, p2, userId: user.id, clientId: client.client_id, ...grant };
  }

  it('an API key revoked with SQL is refused by both instances at once', async () => {
    expect(PRINCIPAL_TTL_MS).toBeGreaterThanOrEqual(3 * SOON);
    const tenant = await createTenant(a);
    await cachedOnBoth(tenant.key);
    await sql(`UPDATE credentials SET revoked_at = now(), revoked_reason = 'admin' WHERE id = $1`, [tenant.keyId]);
    for (const t of [a, b])
      await soon(
        () => list(t, tenant.key),
        (res) => res.status === 401,
      );
  });

  it('an OAuth grant revoked, narrowed, unlinked or its access token deleted with SQL changes on both instances at once', async () => {
    const revoked = await personWithGrant();
    await cachedOnBoth(revoked.token);
    await sql(`UPDATE credentials SET revoked_at = now(), revoked_reason = 'user' WHERE id = $1`, [revoked.id]);
    for (const t of [a, b])
      await soon(
        () => list(t, revoked.token),
        (res) => res.status === 401,
      );

    const narrowed = await personWithGrant();
    await cachedOnBoth(narrowed.token);
    expect(toolNames(await list(b, narrowed.token))).toContain('create_article');
    await sql(`UPDATE credentials SET scopes = '{read}' WHERE id = $1`, [narrowed.id]);
    for (const t of [a, b])
      await soon(
        () => list(t, narrowed.token),
        (res) => res.status === 200 && !toolNames(res).includes('create_article'),
      );

    const tokenDeleted = await personWithGrant();
    await cachedOnBoth(tokenDeleted.token);
    await sql(`DELETE FROM oauth_tokens WHERE credential_id = $1 AND kind = 'access'`, [tokenDeleted.id]);
    for (const t of [a, b])
      await soon(
        () => list(t, tokenDeleted.token),
        (res) => res.status === 401,
      );

    const unlinked = await personWithGrant();
    await cachedOnBoth(unlinked.token);
    expect((await callTool(b, unlinked.token, 'list_projects')).json.items).toHaveLength(2);
    await sql(`DELETE FROM credential_projects WHERE credential_id = $1 AND project_id = $2`, [unlinked.id, unlinked.p1]);
    const reached = async () => {
      const out = await callTool(b, unlinked.token, 'list_projects');
      return (out.json?.items as { id: string }[] | undefined)?.map((p) => p.id) ?? [];
    };
    await soon(reached, (ids) => ids.length === 1 && ids[0] === unlinked.p2);
  });

  it('a role, a membership, a person, a project or an account changed with SQL reaches both instances at once', async () => {
    const lowered = await personWithGrant();
    await cachedOnBoth(lowered.token);
    expect(toolNames(await list(b, lowered.token))).toContain('create_article');
    await sql(`UPDATE project_members SET role = 'viewer' WHERE project_id = $1 AND user_id = $2`, [lowered.p1, lowered.userId]);
    for (const t of [a, b])
      await soon(
        () => list(t, lowered.token),
        (res) => res.status === 200 && !toolNames(res).includes('create_article'),
      );

    const removed = await personWithGrant();
    await cachedOnBoth(removed.token);
    expect(toolNames(await list(b, removed.token))).toContain('list_articles');
    await sql(`DELETE FROM account_members WHERE account_id = $1 AND user_id = $2`, [removed.accountId, removed.userId]);
    for (const t of [a, b])
      await soon(
        () => list(t, removed.token),
        (res) => res.status !== 200 || !toolNames(res).includes('list_articles'),
      );

    const disabled = await personWithGrant();
    await cachedOnBoth(disabled.token);
    expect(toolNames(await list(b, disabled.token))).toContain('list_articles');
    await sql(`UPDATE users SET disabled_at = now() WHERE id = $1`, [disabled.userId]);
    for (const t of [a, b])
      await soon(
        () => list(t, disabled.token),
        (res) => res.status !== 200 || !toolNames(res).includes('list_articles'),
      );

    const tenant = await createTenant(a);
    await cachedOnBoth(tenant.key);
    await sql(`UPDATE projects SET disabled_tools = '{delete_article}' WHERE id = $1`, [tenant.projectIds[0]]);
    for (const t of [a, b])
      await soon(
        () => list(t, tenant.key),
        (res) => res.status === 200 && !toolNames(res).includes('delete_article'),
      );

    const accountDeleted = await createTenant(a);
    await cachedOnBoth(accountDeleted.key);
    await sql(`DELETE FROM accounts WHERE id = $1`, [accountDeleted.accountId]);
    for (const t of [a, b])
      await soon(
        () => list(t, accountDeleted.key),
        (res) => res.status === 401,
      );

    const deleted = await createTenant(a, { projects: 2 });
    await cachedOnBoth(deleted.key);
    expect((await callTool(b, deleted.key, 'list_projects')).json.items).toHaveLength(2);
    await sql(`DELETE FROM projects WHERE id = $1`, [deleted.projectIds[0]]);
    const reached = async (t: TestApp) =>
      ((await callTool(t, deleted.key, 'list_projects')).json?.items as { id: string }[] | undefined)?.map((p) => p.id) ?? [];
    for (const t of [a, b])
      await soon(
        () => reached(t),
        (ids) => ids.length === 1 && ids[0] === deleted.projectIds[1],
      );
  });

  it('writes that change no principal, and principal lookups, send nothing on the cache channel', async () => {
    const tenant = await createTenant(a);
    const grant = await personWithGrant();
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    try {
      await listener.query(`LISTEN ${CACHE_CHANNEL}`);
      listener.on('notification', (msg) => heard.push(msg.payload ?? ''));
      // Lookups (uncached, then cached) on both instances, and the writes of other paths.
      for (const t of [a, b]) {
        expect((await list(t, tenant.key)).status).toBe(200);
        expect((await list(t, grant.token)).status).toBe(200);
      }
      await sql(`UPDATE oauth_clients SET last_used_at = now() WHERE id = $1`, [grant.clientId]);
      await sql(`UPDATE users SET name = 'Renamed' WHERE id = $1`, [grant.userId]);
      await sql(`UPDATE users SET disabled_at = NULL WHERE id = $1`, [grant.userId]); // unchanged: not disabled
      await sql(`UPDATE projects SET updated_at = now() WHERE id = $1`, [tenant.projectIds[0]]);
      await sql(`UPDATE credentials SET revoked_at = NULL WHERE id = $1`, [tenant.keyId]); // unchanged: not revoked
      // The purge of long-expired tokens (an access and a refresh token here) goes unheard.
      await sql(
        `INSERT INTO oauth_tokens (token_hash, credential_id, kind, client_id, expires_at)
         VALUES ($1, $3, 'access', $4, now() - interval '2 hours'), ($2, $3, 'refresh', $4, now() - interval '2 hours')`,
        [Buffer.alloc(32, 7), Buffer.alloc(32, 8), grant.id, grant.clientId],
      );
      expect((await sql(`DELETE FROM oauth_tokens WHERE expires_at < now() - interval '1 hour'`)).rowCount).toBe(2);
      // A new key with its project links: nothing cached can name it.
      await newKey(a, tenant.accountId, withRole(tenant.projectIds, 'viewer'));
      // A marker sent last arrives after anything the statements above sent (commit order).
      await sql(`SELECT pg_notify($1, 'marker')`, [CACHE_CHANNEL]);
      await eventually(
        async () => heard.includes('marker'),
        (done) => done,
        5_000,
        10,
      );
      expect(heard.filter((p) => p.startsWith('credential'))).toEqual([]);

      // The same listener does hear a real change, once per transaction however many rows it touches.
      heard.length = 0;
      const second = await newKey(a, tenant.accountId, withRole(tenant.projectIds, 'viewer'));
      await sql(`UPDATE credentials SET revoked_at = now(), revoked_reason = 'admin' WHERE id = ANY($1::uuid[])`, [[tenant.keyId, second.id]]);
      await sql(`UPDATE project_members SET role = role WHERE user_id = $1`, [grant.userId]);
      await sql(`SELECT pg_notify($1, 'marker')`, [CACHE_CHANNEL]);
      await eventually(
        async () => heard.includes('marker'),
        (done) => done,
        5_000,
        10,
      );
      expect(heard.filter((p) => p.startsWith('credential:'))).toHaveLength(2);
      expect(heard.filter((p) => p === 'credentials')).toHaveLength(1);
    } finally {
      await listener.end();
    }
  });

  it('the token exchange makes its grant through CredentialsService, and that grant is what its tokens reach', async () => {
    const person = await consentingPerson(a, ['editor']);
    const client = await newClient(a);
    const createGrant = jest.spyOn(a.app.get(CredentialsService), 'createGrant');
    try {
      const tokens = await connectByOAuth(a, {
        client,
        session: person.session,
        projects: [{ project_id: person.projectIds[0], role: 'editor' }],
        scopes: ['read', 'write'],
      });
      expect(createGrant).toHaveBeenCalledTimes(1);
      const made = await createGrant.mock.results[0].value;
      const grants = await admin(a, 'get', `/admin/v1/accounts/${person.accountId}/grants`, undefined, 200);
      expect(grants.items.map((g: { id: string }) => g.id)).toEqual([made.id]);
      expect(grants.items[0]).toMatchObject({ source: 'oauth', user_id: person.user.id, client_id: client.client_id, scopes: ['read', 'write'] });
      expect((await list(b, tokens.access_token)).status).toBe(200);
    } finally {
      createGrant.mockRestore();
    }
  });
});
