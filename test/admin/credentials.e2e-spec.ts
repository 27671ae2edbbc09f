import { DataSource } from 'typeorm';
import { PrincipalResolver } from '../../src/auth/principal.resolver.js';
import { admin, ISO, MISSING_ID, newAccount, newProject, UUID } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { call, expectError } from './admin-helpers.js';

const KEY_CREATED = ['created_at', 'created_by', 'id', 'key', 'key_prefix', 'name', 'projects', 'scopes'];
const KEY_LISTED = ['created_at', 'created_by', 'id', 'key_prefix', 'name', 'projects', 'revoked_at', 'scopes'];
const GRANT_CREATED = [
  'access_token',
  'client_id',
  'client_name',
  'created_at',
  'expires_at',
  'id',
  'projects',
  'revoked_reason',
  'scopes',
  'source',
  'user_id',
  'via',
];
const GRANT_LISTED = [
  'client_id',
  'client_name',
  'created_at',
  'expires_at',
  'id',
  'projects',
  'revoked_at',
  'revoked_reason',
  'scopes',
  'source',
  'token_prefix',
  'user_id',
  'via',
];
/** What every admin-made grant answers besides its own fields: its source, person and client (docs/admin-api.md#credentials-api-keys-and-grants). */
const ADMIN_GRANT = { source: 'admin', user_id: null, client_id: null, revoked_reason: null, via: null };

describe('admin API: API keys and grants', () => {
  let t: TestApp;
  let resolver: PrincipalResolver;
  let accountId: string;
  let projectA: string;
  let projectB: string;

  beforeAll(async () => {
    t = await startTestApp();
    resolver = t.app.get(PrincipalResolver);
    accountId = (await newAccount(t)).id;
    projectA = (await newProject(t, accountId, 'A')).id;
    projectB = (await newProject(t, accountId, 'B')).id;
  });
  afterAll(async () => {
    await t.close();
  });

  describe('API keys', () => {
    it('creates a key: 201 with exactly the documented fields, the secret once, the prefix', async () => {
      const body = {
        name: 'CI publisher',
        scopes: ['read', 'write'],
        projects: [
          { project_id: projectA, role: 'editor' },
          { project_id: projectB, role: 'viewer' },
        ],
      };
      const res = await call(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, body);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(KEY_CREATED);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'CI publisher',
        key: expect.stringMatching(/^rbk_[A-Za-z0-9_-]{43}$/),
        key_prefix: expect.stringMatching(/^rbk_[A-Za-z0-9_-]{8}$/),
        scopes: ['read', 'write'],
        projects: expect.arrayContaining([
          { project_id: projectA, role: 'editor' },
          { project_id: projectB, role: 'viewer' },
        ]),
        created_at: expect.stringMatching(ISO),
        // Made with the admin token (console-made keys name their owner: test/console/sign-in-link-reach).
        created_by: 'operator',
      });
      expect(res.body.projects).toHaveLength(2);
      expect(res.body.key.startsWith(res.body.key_prefix)).toBe(true);
    });

    it('never shows the secret again: the list has the prefix only', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/api-keys`,
        { name: 'once', scopes: ['read'], projects: [{ project_id: projectA, role: 'viewer' }] },
        201,
      );
      const res = await call(t, 'get', `/admin/v1/accounts/${accountId}/api-keys?limit=200`);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(created.key);
      expect(res.text).not.toContain(created.key.slice(0, 20));
      const listed = res.body.items.find((k: { id: string }) => k.id === created.id);
      expect(Object.keys(listed).sort()).toEqual(KEY_LISTED);
      expect(listed).toEqual({
        id: created.id,
        name: 'once',
        key_prefix: created.key_prefix,
        scopes: ['read'],
        projects: [{ project_id: projectA, role: 'viewer' }],
        revoked_at: null,
        created_at: created.created_at,
        created_by: 'operator',
      });
      for (const item of res.body.items) expect(item).not.toHaveProperty('key');
    });

    it('gives every key a different secret and prefix', async () => {
      const keys = await Promise.all(
        [1, 2, 3].map(() => admin(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name: 'k', scopes: [], projects: [] }, 201)),
      );
      expect(new Set(keys.map((k) => k.key)).size).toBe(3);
      expect(new Set(keys.map((k) => k.key_prefix)).size).toBe(3);
    });

    it('accepts a key with no scopes and no projects', async () => {
      const res = await call(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name: 'empty', scopes: [], projects: [] });
      expect(res.status).toBe(201);
      expect(res.body.scopes).toEqual([]);
      expect(res.body.projects).toEqual([]);
    });

    it('resolves the key to its principal until DELETE, then at once to null; it stays listed with revoked_at', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/api-keys`,
        { name: 'to revoke', scopes: ['read', 'generate'], projects: [{ project_id: projectB, role: 'owner' }] },
        201,
      );
      const principal = await resolver.resolve(created.key);
      expect(principal).not.toBeNull();
      expect(principal!.accountId).toBe(accountId);
      expect(principal!.credential).toEqual({ type: 'api_key', id: created.id, name: 'to revoke' });
      expect([...principal!.scopes].sort()).toEqual(['generate', 'read']);
      expect([...principal!.projects.keys()]).toEqual([projectB]);
      expect(principal!.projects.get(projectB)!.role).toBe('owner');
      // Cached now: the revoke must still take effect at once.
      expect(await resolver.resolve(created.key)).not.toBeNull();

      const del = await call(t, 'delete', `/admin/v1/api-keys/${created.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      expect(await resolver.resolve(created.key)).toBeNull();

      const list = await admin(t, 'get', `/admin/v1/accounts/${accountId}/api-keys?limit=200`, undefined, 200);
      const listed = list.items.find((k: { id: string }) => k.id === created.id);
      expect(listed.revoked_at).toMatch(ISO);
      expect(new Date(listed.revoked_at).getTime()).toBeGreaterThanOrEqual(new Date(created.created_at).getTime());

      // Revoking again is harmless and keeps the first revocation time.
      expect((await call(t, 'delete', `/admin/v1/api-keys/${created.id}`)).status).toBe(204);
      const again = await admin(t, 'get', `/admin/v1/accounts/${accountId}/api-keys?limit=200`, undefined, 200);
      expect(again.items.find((k: { id: string }) => k.id === created.id).revoked_at).toBe(listed.revoked_at);
      expect(await resolver.resolve(created.key)).toBeNull();
    });

    it('does not resolve a made-up key or a key with one character changed', async () => {
      const created = await admin(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name: 'k', scopes: ['read'], projects: [] }, 201);
      const last = created.key.slice(-1);
      expect(await resolver.resolve(created.key.slice(0, -1) + (last === 'A' ? 'B' : 'A'))).toBeNull();
      expect(await resolver.resolve('rbk_' + 'x'.repeat(43))).toBeNull();
      expect(await resolver.resolve(t.adminToken)).toBeNull();
    });

    it('answers 404 for DELETE of an unknown key, of a grant id, and 400 for a malformed id', async () => {
      expectError(await call(t, 'delete', `/admin/v1/api-keys/${MISSING_ID}`), 404, 'not_found');
      const grant = await admin(t, 'post', `/admin/v1/accounts/${accountId}/grants`, { client_name: 'g', scopes: [], projects: [] }, 201);
      expectError(await call(t, 'delete', `/admin/v1/api-keys/${grant.id}`), 404, 'not_found');
      expect(await resolver.resolve(grant.access_token)).not.toBeNull();
      expectError(await call(t, 'delete', '/admin/v1/api-keys/rbk_abc'), 400, 'validation_failed');
    });

    it('answers 404 for an unknown account on create and list', async () => {
      expectError(await call(t, 'post', `/admin/v1/accounts/${MISSING_ID}/api-keys`, { name: 'k', scopes: [], projects: [] }), 404, 'not_found');
      expectError(await call(t, 'get', `/admin/v1/accounts/${MISSING_ID}/api-keys`), 404, 'not_found');
      expectError(await call(t, 'get', '/admin/v1/accounts/xyz/api-keys'), 400, 'validation_failed');
    });

    it.each([
      ['a missing name', { scopes: ['read'], projects: [] }, 'name'],
      ['a missing scopes', { name: 'k', projects: [] }, 'scopes'],
      ['a missing projects', { name: 'k', scopes: ['read'] }, 'projects'],
      ['an unknown scope', { name: 'k', scopes: ['read', 'admin'], projects: [] }, 'scopes'],
      ['scopes as a string', { name: 'k', scopes: 'read', projects: [] }, 'scopes'],
      ['a repeated scope', { name: 'k', scopes: ['read', 'read'], projects: [] }, 'scopes'],
      ['an unknown role', { name: 'k', scopes: ['read'], projects: [{ project_id: MISSING_ID, role: 'admin' }] }, 'role'],
      ['a missing role', { name: 'k', scopes: ['read'], projects: [{ project_id: MISSING_ID }] }, 'role'],
      ['a malformed project_id', { name: 'k', scopes: ['read'], projects: [{ project_id: 'p1', role: 'owner' }] }, 'project_id'],
      ['a project that is a string', { name: 'k', scopes: ['read'], projects: [MISSING_ID] }, 'projects'],
      ['an unknown field in a project', { name: 'k', scopes: ['read'], projects: [{ project_id: MISSING_ID, role: 'owner', extra: 1 }] }, 'extra'],
      ['an unknown field', { name: 'k', scopes: ['read'], projects: [], key: 'rbk_mine' }, 'key'],
      ['a name that is a number', { name: 1, scopes: ['read'], projects: [] }, 'name'],
    ])('answers 400 for %s', async (_case, body, field) => {
      const error = expectError(await call(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
    });

    it('answers 400 for a project listed twice', async () => {
      const error = expectError(
        await call(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, {
          name: 'k',
          scopes: ['read'],
          projects: [
            { project_id: projectA, role: 'owner' },
            { project_id: projectA, role: 'viewer' },
          ],
        }),
        400,
        'validation_failed',
      );
      expect(error.message).toMatch(/more than once/);
    });

    it('answers 422 for a project of another account, and for a project that does not exist; nothing is created', async () => {
      const other = await newAccount(t);
      const foreign = await newProject(t, other.id, 'Theirs');
      const before = await admin(t, 'get', `/admin/v1/accounts/${accountId}/api-keys?limit=200`, undefined, 200);

      const error = expectError(
        await call(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, {
          name: 'k',
          scopes: ['read'],
          projects: [
            { project_id: projectA, role: 'owner' },
            { project_id: foreign.id, role: 'viewer' },
          ],
        }),
        422,
        'unprocessable',
      );
      expect(error.message).toContain(foreign.id);
      expect(error.details).toEqual({ project_ids: [foreign.id] });

      const missing = expectError(
        await call(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, {
          name: 'k',
          scopes: ['read'],
          projects: [{ project_id: MISSING_ID, role: 'owner' }],
        }),
        422,
        'unprocessable',
      );
      expect(missing.details).toEqual({ project_ids: [MISSING_ID] });

      const after = await admin(t, 'get', `/admin/v1/accounts/${accountId}/api-keys?limit=200`, undefined, 200);
      expect(after.items.map((k: { id: string }) => k.id)).toEqual(before.items.map((k: { id: string }) => k.id));
    });

    it('lists only the keys of the account asked for, never its grants', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const key = await admin(
        t,
        'post',
        `/admin/v1/accounts/${account.id}/api-keys`,
        { name: 'mine', scopes: ['read'], projects: [{ project_id: project.id, role: 'owner' }] },
        201,
      );
      await admin(t, 'post', `/admin/v1/accounts/${account.id}/grants`, { client_name: 'a grant', scopes: ['read'], projects: [] }, 201);
      const list = await admin(t, 'get', `/admin/v1/accounts/${account.id}/api-keys`, undefined, 200);
      expect(list.items.map((k: { id: string }) => k.id)).toEqual([key.id]);
      expect(list.next_cursor).toBeNull();
    });
  });

  describe('grants', () => {
    it('creates a grant: 201 with exactly the documented fields; no expiry when expires_in is absent', async () => {
      const res = await call(t, 'post', `/admin/v1/accounts/${accountId}/grants`, {
        client_name: 'Claude',
        scopes: ['read', 'write', 'generate', 'delete'],
        projects: [{ project_id: projectA, role: 'owner' }],
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(GRANT_CREATED);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        client_name: 'Claude',
        access_token: expect.stringMatching(/^rbg_[A-Za-z0-9_-]{43}$/),
        scopes: ['read', 'write', 'generate', 'delete'],
        projects: [{ project_id: projectA, role: 'owner' }],
        expires_at: null,
        created_at: expect.stringMatching(ISO),
        ...ADMIN_GRANT,
      });
    });

    it('sets expires_at from expires_in', async () => {
      const res = await call(t, 'post', `/admin/v1/accounts/${accountId}/grants`, { client_name: 'Cursor', scopes: ['read'], projects: [], expires_in: 3600 });
      expect(res.status).toBe(201);
      expect(res.body.expires_at).toMatch(ISO);
      const lifetime = new Date(res.body.expires_at).getTime() - new Date(res.body.created_at).getTime();
      expect(lifetime).toBe(3600 * 1000);
    });

    it('never shows the access token again: the list has the prefix only', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/grants`,
        { client_name: 'once', scopes: ['read'], projects: [{ project_id: projectB, role: 'editor' }], expires_in: 600 },
        201,
      );
      const res = await call(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(created.access_token);
      expect(res.text).not.toContain(created.access_token.slice(0, 20));
      const listed = res.body.items.find((g: { id: string }) => g.id === created.id);
      expect(Object.keys(listed).sort()).toEqual(GRANT_LISTED);
      expect(listed).toEqual({
        id: created.id,
        client_name: 'once',
        token_prefix: created.access_token.slice(0, 12),
        scopes: ['read'],
        projects: [{ project_id: projectB, role: 'editor' }],
        expires_at: created.expires_at,
        revoked_at: null,
        created_at: created.created_at,
        ...ADMIN_GRANT,
      });
      for (const item of res.body.items) expect(item).not.toHaveProperty('access_token');
    });

    it('resolves the grant until DELETE, then at once to null; it stays listed with revoked_at', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/grants`,
        { client_name: 'to revoke', scopes: ['read'], projects: [{ project_id: projectA, role: 'viewer' }] },
        201,
      );
      const principal = await resolver.resolve(created.access_token);
      expect(principal).not.toBeNull();
      expect(principal!.credential).toEqual({ type: 'grant', id: created.id, name: 'to revoke' });
      expect(principal!.projects.get(projectA)!.role).toBe('viewer');

      const del = await call(t, 'delete', `/admin/v1/grants/${created.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      expect(await resolver.resolve(created.access_token)).toBeNull();

      const list = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200);
      expect(list.items.find((g: { id: string }) => g.id === created.id).revoked_at).toMatch(ISO);
    });

    it('does not resolve an expired grant', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/grants`,
        { client_name: 'short-lived', scopes: ['read'], projects: [{ project_id: projectA, role: 'viewer' }], expires_in: 60 },
        201,
      );
      await t.app.get(DataSource).query(`UPDATE credentials SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.id]);
      // Resolved for the first time after the expiry: no cache can hide it.
      expect(await resolver.resolve(created.access_token)).toBeNull();
      const list = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200);
      const listed = list.items.find((g: { id: string }) => g.id === created.id);
      expect(new Date(listed.expires_at).getTime()).toBeLessThan(Date.now());
      expect(listed.revoked_at).toBeNull();
    });

    it('accepts any whole expires_in from 1 second: such a grant resolves, then stops resolving once it expires', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/grants`,
        { client_name: 'one-second', scopes: ['read'], projects: [], expires_in: 1 },
        201,
      );
      const expiresAt = new Date(created.expires_at).getTime();
      expect(expiresAt - new Date(created.created_at).getTime()).toBe(1000);
      expect(await resolver.resolve(created.access_token)).not.toBeNull();
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
      // Cached a moment ago: the grant's own expiry is checked on every use.
      expect(await resolver.resolve(created.access_token)).toBeNull();
    });

    it('a grant that has not expired yet resolves', async () => {
      const created = await admin(
        t,
        'post',
        `/admin/v1/accounts/${accountId}/grants`,
        { client_name: 'fresh', scopes: ['read'], projects: [], expires_in: 60 },
        201,
      );
      expect(await resolver.resolve(created.access_token)).not.toBeNull();
    });

    it('answers 404 for DELETE of an unknown grant, of an API key id, and 400 for a malformed id', async () => {
      expectError(await call(t, 'delete', `/admin/v1/grants/${MISSING_ID}`), 404, 'not_found');
      const key = await admin(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name: 'k', scopes: [], projects: [] }, 201);
      expectError(await call(t, 'delete', `/admin/v1/grants/${key.id}`), 404, 'not_found');
      expect(await resolver.resolve(key.key)).not.toBeNull();
      expectError(await call(t, 'delete', '/admin/v1/grants/not-a-uuid'), 400, 'validation_failed');
    });

    it('answers 404 for an unknown account on create and list', async () => {
      expectError(await call(t, 'post', `/admin/v1/accounts/${MISSING_ID}/grants`, { client_name: 'g', scopes: [], projects: [] }), 404, 'not_found');
      expectError(await call(t, 'get', `/admin/v1/accounts/${MISSING_ID}/grants`), 404, 'not_found');
    });

    it.each([
      ['a missing client_name', { scopes: ['read'], projects: [] }, 'client_name'],
      ['name instead of client_name', { name: 'g', scopes: ['read'], projects: [] }, 'property name should not exist'],
      ['an unknown scope', { client_name: 'g', scopes: ['publish'], projects: [] }, 'scopes'],
      ['an unknown role', { client_name: 'g', scopes: ['read'], projects: [{ project_id: MISSING_ID, role: 'reader' }] }, 'role'],
      ['expires_in as a string', { client_name: 'g', scopes: ['read'], projects: [], expires_in: '3600' }, 'expires_in'],
      ['expires_in not whole', { client_name: 'g', scopes: ['read'], projects: [], expires_in: 90.5 }, 'expires_in'],
      ['a zero expires_in', { client_name: 'g', scopes: ['read'], projects: [], expires_in: 0 }, 'expires_in'],
      ['a negative expires_in', { client_name: 'g', scopes: ['read'], projects: [], expires_in: -60 }, 'expires_in'],
      ['an access_token chosen by the client', { client_name: 'g', scopes: ['read'], projects: [], access_token: 'rbg_mine' }, 'access_token'],
    ])('answers 400 for %s', async (_case, body, field) => {
      const error = expectError(await call(t, 'post', `/admin/v1/accounts/${accountId}/grants`, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
    });

    it('answers 422 for a project of another account, and for a project that does not exist', async () => {
      const other = await newAccount(t);
      const foreign = await newProject(t, other.id, 'Theirs');
      const error = expectError(
        await call(t, 'post', `/admin/v1/accounts/${accountId}/grants`, {
          client_name: 'g',
          scopes: ['read'],
          projects: [{ project_id: foreign.id, role: 'owner' }],
        }),
        422,
        'unprocessable',
      );
      expect(error.details).toEqual({ project_ids: [foreign.id] });
      expectError(
        await call(t, 'post', `/admin/v1/accounts/${accountId}/grants`, {
          client_name: 'g',
          scopes: ['read'],
          projects: [{ project_id: MISSING_ID, role: 'owner' }],
        }),
        422,
        'unprocessable',
      );
    });
  });

  it('a PATCH of a project shows at once in the principal of a key that reaches it', async () => {
    const account = await newAccount(t);
    const project = await newProject(t, account.id, 'Blog');
    const key = await admin(
      t,
      'post',
      `/admin/v1/accounts/${account.id}/api-keys`,
      { name: 'k', scopes: ['read'], projects: [{ project_id: project.id, role: 'owner' }] },
      201,
    );
    expect([...(await resolver.resolve(key.key))!.projects.get(project.id)!.disabledTools]).toEqual([]);
    await admin(t, 'patch', `/admin/v1/projects/${project.id}`, { name: 'Renamed', disabled_tools: ['generate_image'] }, 200);
    const after = (await resolver.resolve(key.key))!.projects.get(project.id)!;
    expect(after.name).toBe('Renamed');
    expect([...after.disabledTools]).toEqual(['generate_image']);
  });
});
