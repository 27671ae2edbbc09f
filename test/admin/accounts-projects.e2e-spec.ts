import { admin, ISO, MISSING_ID, newAccount, newProject, UUID } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { call, expectError } from './admin-helpers.js';

describe('admin API: accounts and projects', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /admin/v1/accounts', () => {
    it('creates an account: 201 with exactly id, name, owner_email, created_at', async () => {
      const before = Date.now();
      const res = await call(t, 'post', '/admin/v1/accounts', { name: 'Acme Publishing', owner_email: 'owner@acme.test' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'name', 'owner_email']);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Acme Publishing',
        owner_email: 'owner@acme.test',
        created_at: expect.stringMatching(ISO),
      });
      expect(new Date(res.body.created_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(new Date(res.body.created_at).getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it.each([
      ['a missing name', { owner_email: 'a@example.com' }, 'name'],
      ['a missing owner_email', { name: 'Acme' }, 'owner_email'],
      ['an empty body', {}, 'name'],
      ['a name that is a number', { name: 42, owner_email: 'a@example.com' }, 'name'],
      ['an empty name', { name: '', owner_email: 'a@example.com' }, 'name'],
      ['a name of 201 characters', { name: 'x'.repeat(201), owner_email: 'a@example.com' }, 'name'],
      ['a bad email', { name: 'Acme', owner_email: 'not-an-email' }, 'owner_email'],
      ['an email without a domain', { name: 'Acme', owner_email: 'owner@' }, 'owner_email'],
      ['an email that is an array', { name: 'Acme', owner_email: ['a@example.com'] }, 'owner_email'],
      ['an unknown field', { name: 'Acme', owner_email: 'a@example.com', plan: 'gold' }, 'plan'],
      ['an id chosen by the client', { id: MISSING_ID, name: 'Acme', owner_email: 'a@example.com' }, 'id'],
    ])('answers 400 for %s, naming the field in details', async (_case, body, field) => {
      const error = expectError(await call(t, 'post', '/admin/v1/accounts', body), 400, 'validation_failed');
      expect(Array.isArray(error.details)).toBe(true);
      expect((error.details as string[]).some((d) => d.includes(field))).toBe(true);
      expect(error.message).toMatch(/^Invalid request: /);
    });

    it('tells an unknown field apart in its message', async () => {
      const error = expectError(
        await call(t, 'post', '/admin/v1/accounts', { name: 'Acme', owner_email: 'a@example.com', plan: 'gold' }),
        400,
        'validation_failed',
      );
      expect(error.details).toEqual(['property plan should not exist']);
    });
  });

  describe('GET /admin/v1/accounts/:account_id', () => {
    it('answers 200 with the account as created', async () => {
      const created = await newAccount(t);
      const res = await call(t, 'get', `/admin/v1/accounts/${created.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
    });

    it('answers 404 for an unknown id', async () => {
      const error = expectError(await call(t, 'get', `/admin/v1/accounts/${MISSING_ID}`), 404, 'not_found');
      expect(error.message).toContain(MISSING_ID);
    });

    it.each(['not-a-uuid', '123', '00000000-0000-4000-8000-00000000000', "1' OR '1'='1", '%00'])(
      'answers 400 (never 500) for the malformed id %p',
      async (id) => {
        expectError(await call(t, 'get', `/admin/v1/accounts/${encodeURIComponent(id)}`), 400, 'validation_failed');
      },
    );

    it('ignores a query string on a single-account read (it takes no parameters)', async () => {
      const account = await newAccount(t);
      const res = await call(t, 'get', `/admin/v1/accounts/${account.id}?x=1`);
      expect(res.status).toBe(200);
    });
  });

  describe('POST /admin/v1/accounts/:account_id/projects', () => {
    it('creates a project: 201 with exactly id, account_id, name, disabled_tools, created_at', async () => {
      const account = await newAccount(t);
      const res = await call(t, 'post', `/admin/v1/accounts/${account.id}/projects`, {
        name: 'Engineering blog',
        disabled_tools: ['generate_image', 'delete_article'],
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['account_id', 'created_at', 'disabled_tools', 'id', 'name']);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        account_id: account.id,
        name: 'Engineering blog',
        disabled_tools: ['generate_image', 'delete_article'],
        created_at: expect.stringMatching(ISO),
      });
    });

    it('defaults disabled_tools to an empty list and folds repeated names', async () => {
      const account = await newAccount(t);
      expect((await newProject(t, account.id, 'Plain')).disabled_tools).toEqual([]);
      expect((await newProject(t, account.id, 'Twice', ['generate_image', 'generate_image'])).disabled_tools).toEqual(['generate_image']);
    });

    it('answers 404 for an unknown account and 400 for a malformed account id', async () => {
      expectError(await call(t, 'post', `/admin/v1/accounts/${MISSING_ID}/projects`, { name: 'Blog' }), 404, 'not_found');
      expectError(await call(t, 'post', '/admin/v1/accounts/nope/projects', { name: 'Blog' }), 400, 'validation_failed');
    });

    it.each([
      ['a missing name', { disabled_tools: [] }, 'name'],
      ['a name that is an object', { name: { en: 'Blog' } }, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['disabled_tools as a string', { name: 'Blog', disabled_tools: 'generate_image' }, 'disabled_tools'],
      ['disabled_tools with a number', { name: 'Blog', disabled_tools: [1] }, 'disabled_tools'],
      ['an unknown field', { name: 'Blog', account_id: MISSING_ID }, 'account_id'],
    ])('answers 400 for %s', async (_case, body, field) => {
      const account = await newAccount(t);
      const error = expectError(await call(t, 'post', `/admin/v1/accounts/${account.id}/projects`, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
    });

    it('answers 400 naming an unknown tool name in disabled_tools', async () => {
      const account = await newAccount(t);
      const error = expectError(
        await call(t, 'post', `/admin/v1/accounts/${account.id}/projects`, { name: 'Blog', disabled_tools: ['generate_image', 'launch_rocket'] }),
        400,
        'validation_failed',
      );
      expect(error.message).toContain('launch_rocket');
      expect(error.details).toEqual({ disabled_tools: ['launch_rocket'] });
      // Nothing was created.
      const list = await admin(t, 'get', `/admin/v1/accounts/${account.id}/projects`, undefined, 200);
      expect(list.items).toEqual([]);
    });
  });

  describe('GET /admin/v1/accounts/:account_id/projects', () => {
    it("lists the account's projects newest first, and only its own", async () => {
      const account = await newAccount(t);
      const other = await newAccount(t);
      const first = await newProject(t, account.id, 'First');
      const second = await newProject(t, account.id, 'Second', ['write_article']);
      await newProject(t, other.id, 'Not mine');
      const res = await call(t, 'get', `/admin/v1/accounts/${account.id}/projects`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      expect(res.body).toEqual({ items: [second, first], next_cursor: null });
    });

    it('answers an empty list for an account with no project, 404 for an unknown account', async () => {
      const account = await newAccount(t);
      expect((await call(t, 'get', `/admin/v1/accounts/${account.id}/projects`)).body).toEqual({ items: [], next_cursor: null });
      expectError(await call(t, 'get', `/admin/v1/accounts/${MISSING_ID}/projects`), 404, 'not_found');
    });
  });

  describe('PATCH /admin/v1/projects/:project_id', () => {
    it('renames a project and keeps its disabled tools', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id, 'Old name', ['generate_image']);
      const res = await call(t, 'patch', `/admin/v1/projects/${project.id}`, { name: 'New name' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...project, name: 'New name' });
    });

    it('replaces disabled_tools and keeps the name; an empty list enables every tool again', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id, 'Blog', ['generate_image']);
      const res = await call(t, 'patch', `/admin/v1/projects/${project.id}`, { disabled_tools: ['write_article', 'delete_article'] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...project, disabled_tools: ['write_article', 'delete_article'] });
      const cleared = await call(t, 'patch', `/admin/v1/projects/${project.id}`, { disabled_tools: [] });
      expect(cleared.body.disabled_tools).toEqual([]);
    });

    it('updates both fields at once, and the change shows in the list', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id, 'Blog');
      const res = await call(t, 'patch', `/admin/v1/projects/${project.id}`, { name: 'Docs', disabled_tools: ['generate_image'] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...project, name: 'Docs', disabled_tools: ['generate_image'] });
      const list = await admin(t, 'get', `/admin/v1/accounts/${account.id}/projects`, undefined, 200);
      expect(list.items).toEqual([res.body]);
    });

    it('answers 200 and changes nothing for an empty body', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id, 'Blog', ['generate_image']);
      const res = await call(t, 'patch', `/admin/v1/projects/${project.id}`, {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual(project);
    });

    it('answers 400 for an unknown tool and changes nothing', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id, 'Blog');
      const error = expectError(
        await call(t, 'patch', `/admin/v1/projects/${project.id}`, { name: 'Renamed', disabled_tools: ['nope_tool'] }),
        400,
        'validation_failed',
      );
      expect(error.message).toContain('nope_tool');
      const list = await admin(t, 'get', `/admin/v1/accounts/${account.id}/projects`, undefined, 200);
      expect(list.items).toEqual([project]);
    });

    it.each([
      ['an unknown field', { account_id: MISSING_ID }, 'account_id'],
      ['a name that is a number', { name: 7 }, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a null name', { name: null, disabled_tools: 'x' }, 'disabled_tools'],
      ['disabled_tools as an object', { disabled_tools: { generate_image: true } }, 'disabled_tools'],
    ])('answers 400 for %s', async (_case, body, field) => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id, 'Blog');
      const error = expectError(await call(t, 'patch', `/admin/v1/projects/${project.id}`, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toContain(field);
    });

    it('answers 404 for an unknown project and 400 for a malformed id', async () => {
      expectError(await call(t, 'patch', `/admin/v1/projects/${MISSING_ID}`, { name: 'x' }), 404, 'not_found');
      expectError(await call(t, 'patch', '/admin/v1/projects/12345', { name: 'x' }), 400, 'validation_failed');
    });
  });
});
