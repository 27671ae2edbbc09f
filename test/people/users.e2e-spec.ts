import { call, expectError } from '../admin/admin-helpers.js';
import { admin, ISO, MISSING_ID, newAccount, UUID } from '../support/fixtures.js';
import { addAccountMember, newUser } from '../support/people.js';
import { createDatabase, type TestDatabase } from '../support/database.js';
import type { TestApp } from '../support/test-app.js';

const USER_FIELDS = ['created_at', 'disabled_at', 'email', 'id', 'name'];
const unique = () => Math.random().toString(36).slice(2, 10);

describe('admin API: users', () => {
  let db: TestDatabase;
  let t: TestApp;

  // A database of its own: accounts made by other files add users too, and the list is read whole here.
  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app();
  });
  afterAll(() => db?.drop());

  describe('POST /admin/v1/users', () => {
    it('creates a user: 201 with exactly the documented fields, the email stored lower-case', async () => {
      const email = `Ada.${unique()}@Example.COM`;
      const res = await call(t, 'post', '/admin/v1/users', { email, name: 'Ada Lovelace' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(USER_FIELDS);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        email: email.toLowerCase(),
        name: 'Ada Lovelace',
        disabled_at: null,
        created_at: expect.stringMatching(ISO),
      });
    });

    it('creates a user without a name (null)', async () => {
      const res = await call(t, 'post', '/admin/v1/users', { email: `${unique()}@example.com` });
      expect(res.status).toBe(201);
      expect(res.body.name).toBeNull();
    });

    it('answers 409 for an email that exists in any case, naming the user; nothing is created', async () => {
      const email = `grace-${unique()}@example.com`;
      const first = await admin(t, 'post', '/admin/v1/users', { email }, 201);
      for (const again of [email, email.toUpperCase(), `Grace-${email.slice(6)}`]) {
        const error = expectError(await call(t, 'post', '/admin/v1/users', { email: again }), 409, 'conflict');
        expect(error.message).toContain(email);
        expect(error.details).toEqual({ user_id: first.id });
      }
      const list = await admin(t, 'get', `/admin/v1/users?email=${encodeURIComponent(email)}`, undefined, 200);
      expect(list.items.map((u: { id: string }) => u.id)).toEqual([first.id]);
    });

    it('answers one 201 and 409s when the same email (in several cases) is posted at once', async () => {
      const email = `race-${unique()}@example.com`;
      const variants = [email, email.toUpperCase(), email, `RACE-${email.slice(5)}`, email, email.toUpperCase()];
      const answers = await Promise.all(variants.map((e) => call(t, 'post', '/admin/v1/users', { email: e })));
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      for (const r of answers.filter((a) => a.status === 409)) expectError(r, 409, 'conflict');
      const list = await admin(t, 'get', `/admin/v1/users?email=${encodeURIComponent(email)}`, undefined, 200);
      expect(list.items).toHaveLength(1);
    });

    it.each([
      ['a missing email', { name: 'x' }, 'email'],
      ['a bad email', { email: 'not-an-email' }, 'email'],
      ['an email that is a number', { email: 42 }, 'email'],
      ['an email of 321 characters', { email: `${'a'.repeat(309)}@example.com` }, 'email'],
      ['an empty name', { email: 'a@example.com', name: '' }, 'name'],
      ['a name that is a number', { email: 'a@example.com', name: 7 }, 'name'],
      ['a name of 201 characters', { email: 'a@example.com', name: 'x'.repeat(201) }, 'name'],
      ['an unknown field', { email: 'a@example.com', disabled_at: null }, 'disabled_at'],
      ['an id chosen by the client', { email: 'a@example.com', id: MISSING_ID }, 'id'],
    ])('answers 400 for %s', async (_case, body, field) => {
      const error = expectError(await call(t, 'post', '/admin/v1/users', body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
    });

    it('answers 401 without the admin token', async () => {
      expectError(await call(t, 'post', '/admin/v1/users', { email: `${unique()}@example.com` }, null), 401, 'unauthorized');
      expectError(await call(t, 'get', '/admin/v1/users', undefined, 'wrong'), 401, 'unauthorized');
    });
  });

  describe('GET /admin/v1/users', () => {
    it('finds the user by email in any case, and nobody for an unknown email', async () => {
      const user = await newUser(t, `Mixed-${unique()}@Example.com`);
      for (const email of [user.email, user.email.toUpperCase()]) {
        const res = await call(t, 'get', `/admin/v1/users?email=${encodeURIComponent(email)}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ items: [expect.objectContaining({ id: user.id, email: user.email })], next_cursor: null });
        expect(Object.keys(res.body.items[0]).sort()).toEqual(USER_FIELDS);
      }
      expect(await admin(t, 'get', `/admin/v1/users?email=nobody-${unique()}@example.com`, undefined, 200)).toEqual({ items: [], next_cursor: null });
      // Matched whole, not as a part.
      expect((await admin(t, 'get', `/admin/v1/users?email=${encodeURIComponent(user.email.slice(1))}`, undefined, 200)).items).toEqual([]);
    });

    it('lists every user newest first, page by page with the cursor', async () => {
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await newUser(t));
      const first = await admin(t, 'get', '/admin/v1/users?limit=2', undefined, 200);
      expect(first.items.map((u: { id: string }) => u.id)).toEqual([made[2].id, made[1].id]);
      expect(first.next_cursor).toEqual(expect.any(String));
      const second = await admin(t, 'get', `/admin/v1/users?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, undefined, 200);
      expect(second.items[0].id).toBe(made[0].id);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=abc', 'limit'],
      ['email=', 'email'],
      ['unknown=1', 'unknown'],
    ])('answers 400 for ?%s', async (query, field) => {
      const error = expectError(await call(t, 'get', `/admin/v1/users?${query}`), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
    });

    it('answers 400 for a cursor it did not make', async () => {
      expectError(await call(t, 'get', '/admin/v1/users?cursor=bm9wZQ'), 400, 'validation_failed');
    });
  });

  describe('GET /admin/v1/users/:user_id', () => {
    it('answers the user with the accounts they belong to and their role there', async () => {
      const user = await newUser(t);
      expect(await admin(t, 'get', `/admin/v1/users/${user.id}`, undefined, 200)).toEqual({
        id: user.id,
        email: user.email,
        name: null,
        disabled_at: null,
        created_at: expect.stringMatching(ISO),
        accounts: [],
      });
      const one = await newAccount(t);
      const two = await newAccount(t);
      await addAccountMember(t, one.id, user.id, 'member');
      await addAccountMember(t, two.id, user.id, 'owner');
      const res = await call(t, 'get', `/admin/v1/users/${user.id}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([...USER_FIELDS, 'accounts'].sort());
      expect(res.body.accounts).toEqual([
        { account_id: one.id, role: 'member' },
        { account_id: two.id, role: 'owner' },
      ]);
    });

    it('answers 404 for an unknown user and 400 for a malformed id', async () => {
      expectError(await call(t, 'get', `/admin/v1/users/${MISSING_ID}`), 404, 'not_found');
      expectError(await call(t, 'get', '/admin/v1/users/not-a-uuid'), 400, 'validation_failed');
    });
  });

  describe('PATCH /admin/v1/users/:user_id', () => {
    it('renames, clears the name, disables (keeping the first time) and enables again', async () => {
      const user = await newUser(t);
      const renamed = await call(t, 'patch', `/admin/v1/users/${user.id}`, { name: 'Renamed' });
      expect(renamed.status).toBe(200);
      expect(Object.keys(renamed.body).sort()).toEqual(USER_FIELDS);
      expect(renamed.body).toMatchObject({ id: user.id, email: user.email, name: 'Renamed', disabled_at: null });

      const disabled = await admin(t, 'patch', `/admin/v1/users/${user.id}`, { disabled: true }, 200);
      expect(disabled).toMatchObject({ name: 'Renamed', disabled_at: expect.stringMatching(ISO) });
      const again = await admin(t, 'patch', `/admin/v1/users/${user.id}`, { disabled: true, name: null }, 200);
      expect(again).toMatchObject({ name: null, disabled_at: disabled.disabled_at });
      expect((await admin(t, 'get', `/admin/v1/users/${user.id}`, undefined, 200)).disabled_at).toBe(disabled.disabled_at);

      expect(await admin(t, 'patch', `/admin/v1/users/${user.id}`, { disabled: false }, 200)).toMatchObject({ disabled_at: null });
      // An empty body changes nothing.
      expect(await admin(t, 'patch', `/admin/v1/users/${user.id}`, {}, 200)).toMatchObject({ id: user.id, name: null, disabled_at: null });
    });

    it.each([
      ['disabled as a string', { disabled: 'true' }, 'disabled'],
      ['disabled as a number', { disabled: 1 }, 'disabled'],
      ['an empty name', { name: '' }, 'name'],
      ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
      ['an email (it cannot change)', { email: 'new@example.com' }, 'email'],
      ['disabled_at', { disabled_at: '2026-01-01T00:00:00.000Z' }, 'disabled_at'],
    ])('answers 400 for %s', async (_case, body, field) => {
      const user = await newUser(t);
      const error = expectError(await call(t, 'patch', `/admin/v1/users/${user.id}`, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
      expect((await admin(t, 'get', `/admin/v1/users/${user.id}`, undefined, 200)).disabled_at).toBeNull();
    });

    it('answers 404 for an unknown user', async () => {
      expectError(await call(t, 'patch', `/admin/v1/users/${MISSING_ID}`, { disabled: true }), 404, 'not_found');
    });
  });

  it('documents the people endpoints in the OpenAPI document', async () => {
    const paths = (await t.http.get('/admin/v1/openapi.json')).body.paths as Record<string, Record<string, unknown>>;
    const expected: [string, string][] = [
      ['/admin/v1/users', 'post'],
      ['/admin/v1/users', 'get'],
      ['/admin/v1/users/{user_id}', 'get'],
      ['/admin/v1/users/{user_id}', 'patch'],
      ['/admin/v1/accounts/{account_id}/members/{user_id}', 'put'],
      ['/admin/v1/accounts/{account_id}/members', 'get'],
      ['/admin/v1/accounts/{account_id}/members/{user_id}', 'delete'],
      ['/admin/v1/projects/{project_id}/members/{user_id}', 'put'],
      ['/admin/v1/projects/{project_id}/members', 'get'],
      ['/admin/v1/projects/{project_id}/members/{user_id}', 'delete'],
    ];
    for (const [path, method] of expected) expect(paths[path]?.[method]).toBeDefined();
  });
});
