import { DataSource } from 'typeorm';
import { call, expectError } from '../admin/admin-helpers.js';
import { createDatabase, type TestDatabase } from '../support/database.js';
import { admin, MISSING_ID, newAccount, newProject, walk } from '../support/fixtures.js';
import { addAccountMember, addProjectMember, newUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

const unique = () => Math.random().toString(36).slice(2, 10);

describe('admin API: account and project members', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app();
  });
  afterAll(() => db?.drop());

  const put = (path: string, body: unknown) => call(t, 'put', path, body);
  const members = async (accountId: string) => (await admin(t, 'get', `/admin/v1/accounts/${accountId}/members?limit=200`, undefined, 200)).items;
  const projectMembers = async (projectId: string) => (await admin(t, 'get', `/admin/v1/projects/${projectId}/members?limit=200`, undefined, 200)).items;
  const ownerOf = async (accountId: string) => (await members(accountId)).find((m: { role: string }) => m.role === 'owner');

  describe('account creation', () => {
    it("makes owner_email a new user (lower-case) and the account's owner member", async () => {
      const email = `Founder-${unique()}@Example.com`;
      const account = await admin(t, 'post', '/admin/v1/accounts', { name: 'Founded', owner_email: email }, 201);
      expect(account.owner_email).toBe(email);
      const [owner] = await members(account.id);
      expect(owner).toEqual({ account_id: account.id, user_id: expect.any(String), email: email.toLowerCase(), role: 'owner' });
      expect(await admin(t, 'get', `/admin/v1/users/${owner.user_id}`, undefined, 200)).toMatchObject({
        email: email.toLowerCase(),
        accounts: [{ account_id: account.id, role: 'owner' }],
      });
    });

    it('finds an existing user whatever the case of owner_email, and makes no second one', async () => {
      const user = await newUser(t, `boss-${unique()}@example.com`);
      const account = await admin(t, 'post', '/admin/v1/accounts', { name: 'Second', owner_email: user.email.toUpperCase() }, 201);
      expect(await members(account.id)).toEqual([{ account_id: account.id, user_id: user.id, email: user.email, role: 'owner' }]);
      expect((await admin(t, 'get', `/admin/v1/users?email=${encodeURIComponent(user.email)}`, undefined, 200)).items).toHaveLength(1);
    });

    it('creates several accounts of one new owner at once: one user, owner of each', async () => {
      const email = `busy-${unique()}@example.com`;
      const accounts = await Promise.all(
        [email, email.toUpperCase(), email, email.toUpperCase()].map((owner_email, i) =>
          admin(t, 'post', '/admin/v1/accounts', { name: `Busy ${i}`, owner_email }, 201),
        ),
      );
      const users = (await admin(t, 'get', `/admin/v1/users?email=${email}`, undefined, 200)).items;
      expect(users).toHaveLength(1);
      const user = await admin(t, 'get', `/admin/v1/users/${users[0].id}`, undefined, 200);
      expect(user.accounts.map((a: { account_id: string }) => a.account_id).sort()).toEqual(accounts.map((a) => a.id).sort());
      expect(user.accounts.every((a: { role: string }) => a.role === 'owner')).toBe(true);
    });

    it('creates neither the account nor the user when the owner cannot be made a member (all in one transaction)', async () => {
      // A 400 happens before the transaction; what proves the transaction is that a failed member
      // insert leaves no account behind. Forced here by a trigger that refuses this one email.
      const email = `refused-${unique()}@example.com`;
      const sql = t.app.get(DataSource);
      await sql.query(`
        CREATE OR REPLACE FUNCTION refuse_owner() RETURNS trigger AS $$
        BEGIN
          IF (SELECT u.email FROM users u WHERE u.id = NEW.user_id) = '${email}' THEN RAISE EXCEPTION 'refused for the test'; END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql;
        CREATE TRIGGER refuse_owner BEFORE INSERT ON account_members FOR EACH ROW EXECUTE FUNCTION refuse_owner();`);
      try {
        const res = await call(t, 'post', '/admin/v1/accounts', { name: 'Never', owner_email: email });
        expect(res.status).toBe(500);
        const counts = await sql.query(
          `SELECT (SELECT count(*) FROM accounts WHERE name = 'Never')::int AS accounts, (SELECT count(*) FROM users WHERE email = $1)::int AS users`,
          [email],
        );
        expect(counts).toEqual([{ accounts: 0, users: 0 }]);
      } finally {
        await sql.query(`DROP TRIGGER refuse_owner ON account_members; DROP FUNCTION refuse_owner();`);
      }
    });
  });

  describe('account members', () => {
    it('PUT adds a member and changes their role: 200 with exactly account_id, user_id, role', async () => {
      const account = await newAccount(t);
      const user = await newUser(t);
      const added = await put(`/admin/v1/accounts/${account.id}/members/${user.id}`, { role: 'member' });
      expect(added.status).toBe(200);
      expect(added.body).toEqual({ account_id: account.id, user_id: user.id, role: 'member' });
      expect((await put(`/admin/v1/accounts/${account.id}/members/${user.id}`, { role: 'owner' })).body).toEqual({
        account_id: account.id,
        user_id: user.id,
        role: 'owner',
      });
      expect(await members(account.id)).toContainEqual({ account_id: account.id, user_id: user.id, email: user.email, role: 'owner' });
    });

    it('GET lists the members newest first with their email, page by page', async () => {
      const account = await newAccount(t);
      const owner = await ownerOf(account.id);
      const added = [];
      for (let i = 0; i < 3; i++) {
        const user = await newUser(t);
        await addAccountMember(t, account.id, user.id, 'member');
        added.push(user);
      }
      const pages = await walk(t, `/admin/v1/accounts/${account.id}/members`, 1);
      expect(pages).toHaveLength(4);
      const items = pages.flatMap((p) => p.items);
      expect(items.map((m) => m.user_id)).toEqual([added[2].id, added[1].id, added[0].id, owner.user_id]);
      for (const item of items) expect(Object.keys(item).sort()).toEqual(['account_id', 'email', 'role', 'user_id']);
      expectError(await call(t, 'get', `/admin/v1/accounts/${account.id}/members?cursor=bm9wZQ`), 400, 'validation_failed');
      expectError(await call(t, 'get', `/admin/v1/accounts/${account.id}/members?limit=0`), 400, 'validation_failed');
    });

    it('DELETE removes the member and their project memberships there; a second DELETE is 404', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const user = await newUser(t);
      await addAccountMember(t, account.id, user.id, 'member');
      await addProjectMember(t, account.id, project.id, user.id, 'editor');
      expect(await projectMembers(project.id)).toHaveLength(1);

      const res = await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${user.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await members(account.id)).map((m: { user_id: string }) => m.user_id)).not.toContain(user.id);
      expect(await projectMembers(project.id)).toEqual([]);
      expect((await admin(t, 'get', `/admin/v1/users/${user.id}`, undefined, 200)).accounts).toEqual([]);
      expectError(await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${user.id}`), 404, 'not_found');
    });

    it('answers 409 to removing or demoting the last owner, and allows both once there is another owner', async () => {
      const account = await newAccount(t);
      const first = await ownerOf(account.id);
      const lastOwner = (res: Awaited<ReturnType<typeof call>>) => expect(expectError(res, 409, 'conflict').message).toMatch(/last owner/);
      lastOwner(await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${first.user_id}`));
      lastOwner(await put(`/admin/v1/accounts/${account.id}/members/${first.user_id}`, { role: 'member' }));
      // Setting the owner's own role again is no demotion.
      expect((await put(`/admin/v1/accounts/${account.id}/members/${first.user_id}`, { role: 'owner' })).status).toBe(200);
      expect(await members(account.id)).toEqual([expect.objectContaining({ user_id: first.user_id, role: 'owner' })]);

      const second = await newUser(t);
      await addAccountMember(t, account.id, second.id, 'owner');
      expect((await put(`/admin/v1/accounts/${account.id}/members/${first.user_id}`, { role: 'member' })).status).toBe(200);
      // The second is the last owner now.
      lastOwner(await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${second.id}`));
      lastOwner(await put(`/admin/v1/accounts/${account.id}/members/${second.id}`, { role: 'member' }));
      // A member (not an owner) goes freely.
      expect((await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${first.user_id}`)).status).toBe(204);
      expect(await members(account.id)).toEqual([expect.objectContaining({ user_id: second.id, role: 'owner' })]);
    });

    it('never leaves an account without an owner when two owners are demoted or removed at once', async () => {
      for (let round = 0; round < 8; round++) {
        const account = await newAccount(t);
        const a = (await ownerOf(account.id)).user_id;
        const b = (await newUser(t)).id;
        await addAccountMember(t, account.id, b, 'owner');
        const [x, y] = round % 2 ? [a, b] : [b, a];
        const answers = await Promise.all([
          round % 4 < 2
            ? put(`/admin/v1/accounts/${account.id}/members/${x}`, { role: 'member' })
            : call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${x}`),
          put(`/admin/v1/accounts/${account.id}/members/${y}`, { role: 'member' }),
        ]);
        // One wins (200 for a demotion, 204 for a removal), the other finds the last owner.
        expect(answers.filter((r) => r.status === 200 || r.status === 204)).toHaveLength(1);
        expect(answers.filter((r) => r.status === 409)).toHaveLength(1);
        expect((await members(account.id)).filter((m: { role: string }) => m.role === 'owner')).toHaveLength(1);
      }
    });

    it('answers 404 for an unknown account or user, 404 for removing a non-member, 400 for malformed ids', async () => {
      const account = await newAccount(t);
      const user = await newUser(t);
      expectError(await put(`/admin/v1/accounts/${MISSING_ID}/members/${user.id}`, { role: 'member' }), 404, 'not_found');
      expectError(await put(`/admin/v1/accounts/${account.id}/members/${MISSING_ID}`, { role: 'member' }), 404, 'not_found');
      expectError(await call(t, 'get', `/admin/v1/accounts/${MISSING_ID}/members`), 404, 'not_found');
      expectError(await call(t, 'delete', `/admin/v1/accounts/${MISSING_ID}/members/${user.id}`), 404, 'not_found');
      expectError(await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${MISSING_ID}`), 404, 'not_found');
      expectError(await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${user.id}`), 404, 'not_found');
      expectError(await put(`/admin/v1/accounts/not-a-uuid/members/${user.id}`, { role: 'member' }), 400, 'validation_failed');
      expectError(await put(`/admin/v1/accounts/${account.id}/members/not-a-uuid`, { role: 'member' }), 400, 'validation_failed');
    });

    it.each([
      ['a missing role', {}],
      ['a project role', { role: 'editor' }],
      ['a role in capitals', { role: 'OWNER' }],
      ['an unknown field', { role: 'member', email: 'x@example.com' }],
    ])('answers 400 for %s', async (_case, body) => {
      const account = await newAccount(t);
      const user = await newUser(t);
      const error = expectError(await put(`/admin/v1/accounts/${account.id}/members/${user.id}`, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toMatch(/role|email/);
      expect((await members(account.id)).map((m: { user_id: string }) => m.user_id)).not.toContain(user.id);
    });

    it('answers 401 without the admin token', async () => {
      const account = await newAccount(t);
      const user = await newUser(t);
      expectError(await t.http.put(`/admin/v1/accounts/${account.id}/members/${user.id}`).send({ role: 'owner' }), 401, 'unauthorized');
      expectError(await call(t, 'get', `/admin/v1/accounts/${account.id}/members`, undefined, null), 401, 'unauthorized');
      expectError(await call(t, 'delete', `/admin/v1/accounts/${account.id}/members/${user.id}`, undefined, 'rbk_nope'), 401, 'unauthorized');
    });
  });

  describe('project members', () => {
    it('PUT gives an account member a role on the project: 200 with exactly project_id, user_id, role; GET lists it with the email', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const user = await newUser(t);
      await addAccountMember(t, account.id, user.id, 'member');
      const res = await put(`/admin/v1/projects/${project.id}/members/${user.id}`, { role: 'viewer' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ project_id: project.id, user_id: user.id, role: 'viewer' });
      expect((await put(`/admin/v1/projects/${project.id}/members/${user.id}`, { role: 'editor' })).body).toEqual({
        project_id: project.id,
        user_id: user.id,
        role: 'editor',
      });
      expect(await projectMembers(project.id)).toEqual([{ project_id: project.id, user_id: user.id, email: user.email, role: 'editor' }]);
    });

    it('answers 422 for a person who is not a member of the project’s account (none, or another account’s); nothing is stored', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const stranger = await newUser(t);
      const error = expectError(await put(`/admin/v1/projects/${project.id}/members/${stranger.id}`, { role: 'viewer' }), 422, 'unprocessable');
      expect(error.message).toContain(account.id);

      const other = await newAccount(t);
      const theirs = await newUser(t);
      await addAccountMember(t, other.id, theirs.id, 'owner');
      expectError(await put(`/admin/v1/projects/${project.id}/members/${theirs.id}`, { role: 'owner' }), 422, 'unprocessable');
      expect(await projectMembers(project.id)).toEqual([]);
    });

    it('DELETE ends the project membership (204), the account membership stays; a second DELETE is 404', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const user = await newUser(t);
      await addAccountMember(t, account.id, user.id, 'member');
      await addProjectMember(t, account.id, project.id, user.id, 'owner');
      const res = await call(t, 'delete', `/admin/v1/projects/${project.id}/members/${user.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await projectMembers(project.id)).toEqual([]);
      expect(await members(account.id)).toContainEqual(expect.objectContaining({ user_id: user.id, role: 'member' }));
      expectError(await call(t, 'delete', `/admin/v1/projects/${project.id}/members/${user.id}`), 404, 'not_found');
    });

    it('answers 404 for a project/user pair across accounts, unknown ids, and 400 for malformed ones', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const other = await newAccount(t);
      const otherProject = await newProject(t, other.id);
      const theirs = await newUser(t);
      await addAccountMember(t, other.id, theirs.id, 'member');
      await addProjectMember(t, other.id, otherProject.id, theirs.id, 'editor');
      // A member of the other account's project is no member of this one.
      expectError(await call(t, 'delete', `/admin/v1/projects/${project.id}/members/${theirs.id}`), 404, 'not_found');
      expect(await projectMembers(otherProject.id)).toHaveLength(1);

      expectError(await put(`/admin/v1/projects/${MISSING_ID}/members/${theirs.id}`, { role: 'viewer' }), 404, 'not_found');
      expectError(await put(`/admin/v1/projects/${project.id}/members/${MISSING_ID}`, { role: 'viewer' }), 404, 'not_found');
      expectError(await call(t, 'get', `/admin/v1/projects/${MISSING_ID}/members`), 404, 'not_found');
      expectError(await call(t, 'delete', `/admin/v1/projects/${MISSING_ID}/members/${theirs.id}`), 404, 'not_found');
      expectError(await call(t, 'delete', `/admin/v1/projects/${project.id}/members/${MISSING_ID}`), 404, 'not_found');
      expectError(await put(`/admin/v1/projects/nope/members/${theirs.id}`, { role: 'viewer' }), 400, 'validation_failed');
      expectError(await call(t, 'delete', `/admin/v1/projects/${project.id}/members/nope`), 400, 'validation_failed');
    });

    it('GET lists the project members newest first, page by page', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const added = [];
      for (let i = 0; i < 3; i++) {
        const user = await newUser(t);
        await addAccountMember(t, account.id, user.id, 'member');
        await addProjectMember(t, account.id, project.id, user.id, 'viewer');
        added.push(user.id);
      }
      const pages = await walk(t, `/admin/v1/projects/${project.id}/members`, 2);
      expect(pages.map((p) => p.items.length)).toEqual([2, 1]);
      expect(pages.flatMap((p) => p.items.map((m: { user_id: string }) => m.user_id))).toEqual(added.reverse());
    });

    it.each([
      ['a missing role', {}],
      ['an account role', { role: 'member' }],
      ['a role that is a number', { role: 1 }],
      ['an unknown field', { role: 'viewer', account_id: MISSING_ID }],
    ])('answers 400 for %s', async (_case, body) => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      const owner = await ownerOf(account.id);
      expectError(await put(`/admin/v1/projects/${project.id}/members/${owner.user_id}`, body), 400, 'validation_failed');
      expect(await projectMembers(project.id)).toEqual([]);
    });
  });
});
