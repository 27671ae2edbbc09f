import { admin, newAccount, newKey, newProject, UUID } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import { consoleHttp } from '../support/console.js';
import { withClient } from '../support/database.js';
import { connectByOAuth, consentingPerson, newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { call, expectError } from '../admin/admin-helpers.js';

interface Event {
  id: string;
  at: string;
  account_id: string | null;
  actor_type: string;
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target: Record<string, unknown>;
  change: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

describe('audit trail of administrative acts', () => {
  let t: TestApp;
  const { post } = consoleHttp(() => t);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every event of the trail (the operator's view), oldest first. */
  async function allEvents(): Promise<Event[]> {
    const events: Event[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(t, 'get', `/admin/v1/audit?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      events.push(...(res.body.items as Event[]));
      cursor = res.body.next_cursor;
    } while (cursor);
    return events.reverse();
  }

  /** Runs `act` and answers the events it left. */
  async function eventsOf(act: () => Promise<unknown>): Promise<Event[]> {
    const before = new Set((await allEvents()).map((e) => e.id));
    await act();
    return (await allEvents()).filter((e) => !before.has(e.id));
  }

  const operator = { actor_type: 'operator', actor_id: null, actor_email: null };

  it('each act of the operator through the admin API leaves exactly one event, with its actor, target, change and request', async () => {
    let account!: { id: string; owner_email: string };
    let events = await eventsOf(async () => (account = await newAccount(t)));
    expect(events).toEqual([expect.objectContaining({ ...operator, action: 'account.created', account_id: account.id })]);
    expect(events[0].change).toEqual({ after: expect.objectContaining({ owner_email: account.owner_email }) });

    let project!: { id: string };
    events = await eventsOf(async () => (project = await newProject(t, account.id, 'Blog')));
    expect(events).toEqual([expect.objectContaining({ ...operator, action: 'project.created', account_id: account.id, target: { project_id: project.id } })]);

    events = await eventsOf(() =>
      t.http
        .patch(`/admin/v1/projects/${project.id}`)
        .set('Authorization', `Bearer ${t.adminToken}`)
        .set('User-Agent', 'audit-test/1.0')
        .set('X-Request-Id', 'req-123')
        .send({ disabled_tools: ['delete_article'] })
        .expect(200),
    );
    expect(events).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'project.updated',
        account_id: account.id,
        target: { project_id: project.id },
        change: { before: { name: 'Blog', disabled_tools: [] }, after: { name: 'Blog', disabled_tools: ['delete_article'] } },
        user_agent: 'audit-test/1.0',
        request_id: 'req-123',
        ip: expect.stringMatching(/127\.0\.0\.1/),
      }),
    ]);

    // Without the gateway's id, the event names the one the server made and answered with (the body was
    // read between the two: the request's scope is carried across it).
    let answered!: string;
    events = await eventsOf(async () => {
      const res = await t.http
        .patch(`/admin/v1/projects/${project.id}`)
        .set('Authorization', `Bearer ${t.adminToken}`)
        .send({ disabled_tools: [] })
        .expect(200);
      answered = res.headers['x-request-id'];
    });
    expect(answered).toMatch(/^[0-9a-f-]{36}$/);
    expect(events).toEqual([expect.objectContaining({ action: 'project.updated', request_id: answered })]);

    let user!: { id: string; email: string };
    events = await eventsOf(async () => (user = await newUser(t)));
    expect(events).toEqual([expect.objectContaining({ ...operator, action: 'user.created', account_id: null, target: { user_id: user.id } })]);

    events = await eventsOf(() =>
      call(t, 'put', `/admin/v1/accounts/${account.id}/members/${user.id}`, { role: 'member' }).then((r) => expect(r.status).toBe(200)),
    );
    expect(events).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'account_member.put',
        target: { user_id: user.id },
        change: { before: { role: null }, after: { role: 'member' } },
      }),
    ]);
    events = await eventsOf(() =>
      call(t, 'put', `/admin/v1/projects/${project.id}/members/${user.id}`, { role: 'editor' }).then((r) => expect(r.status).toBe(200)),
    );
    expect(events).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'project_member.put',
        account_id: account.id,
        target: { project_id: project.id, user_id: user.id },
        change: { before: { role: null }, after: { role: 'editor' } },
      }),
    ]);
    events = await eventsOf(() =>
      call(t, 'put', `/admin/v1/projects/${project.id}/members/${user.id}`, { role: 'viewer' }).then((r) => expect(r.status).toBe(200)),
    );
    expect(events.map((e) => [e.action, e.change])).toEqual([['project_member.put', { before: { role: 'editor' }, after: { role: 'viewer' } }]]);
    // The same role again changes nothing: no event.
    expect(
      await eventsOf(() => call(t, 'put', `/admin/v1/projects/${project.id}/members/${user.id}`, { role: 'viewer' }).then((r) => expect(r.status).toBe(200))),
    ).toEqual([]);
    events = await eventsOf(() => admin(t, 'delete', `/admin/v1/projects/${project.id}/members/${user.id}`, undefined, 204));
    expect(events.map((e) => [e.action, e.change])).toEqual([['project_member.removed', { before: { role: 'viewer' }, after: null }]]);

    events = await eventsOf(() => admin(t, 'patch', `/admin/v1/users/${user.id}`, { disabled: true }, 200));
    expect(events).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'user.updated',
        account_id: null,
        target: { user_id: user.id },
        change: { before: { name: null, disabled: false }, after: { name: null, disabled: true } },
      }),
    ]);
    events = await eventsOf(() => admin(t, 'patch', `/admin/v1/users/${user.id}`, { disabled: false }, 200));
    expect(events.map((e) => e.change)).toEqual([{ before: { name: null, disabled: true }, after: { name: null, disabled: false } }]);

    events = await eventsOf(() => admin(t, 'post', `/admin/v1/users/${user.id}/login-links`, {}, 201));
    expect(events).toEqual([expect.objectContaining({ ...operator, action: 'login_link.created', target: { user_id: user.id } })]);
    // No secret of the link is in the trail.
    expect(JSON.stringify(events)).not.toMatch(/rbl_/);

    let key!: { id: string; key: string };
    const keyBody = { name: 'CI', scopes: ['read'], projects: [{ project_id: project.id, role: 'viewer' }] };
    events = await eventsOf(async () => (key = await admin(t, 'post', `/admin/v1/accounts/${account.id}/api-keys`, keyBody, 201)));
    expect(events).toEqual([expect.objectContaining({ ...operator, action: 'api_key.created', account_id: account.id, target: { credential_id: key.id } })]);
    expect(JSON.stringify(events)).not.toContain(key.key);
    events = await eventsOf(() => admin(t, 'delete', `/admin/v1/api-keys/${key.id}`, undefined, 204));
    expect(events).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'api_key.revoked',
        target: { credential_id: key.id, client_id: null },
        change: { before: { revoked_at: null }, after: expect.objectContaining({ revoked_reason: 'admin' }) },
      }),
    ]);
    // Revoking it again changes nothing, and records nothing.
    expect(await eventsOf(() => admin(t, 'delete', `/admin/v1/api-keys/${key.id}`, undefined, 204))).toEqual([]);

    let grant!: { id: string };
    events = await eventsOf(
      async () =>
        (grant = await admin(
          t,
          'post',
          `/admin/v1/accounts/${account.id}/grants`,
          { scopes: keyBody.scopes, projects: keyBody.projects, client_name: 'Claude' },
          201,
        )),
    );
    expect(events.map((e) => [e.action, e.actor_type, e.target])).toEqual([['grant.created', 'operator', { credential_id: grant.id }]]);
    events = await eventsOf(() => admin(t, 'delete', `/admin/v1/grants/${grant.id}`, undefined, 204));
    expect(events.map((e) => [e.action, e.actor_type])).toEqual([['grant.revoked', 'operator']]);

    events = await eventsOf(() => admin(t, 'delete', `/admin/v1/accounts/${account.id}/members/${user.id}`, undefined, 204));
    expect(events.map((e) => [e.action, e.change])).toEqual([['account_member.removed', { before: { role: 'member' }, after: null }]]);

    // A refused act (the last owner demoted) records nothing.
    const owner = (await admin(t, 'get', `/admin/v1/accounts/${account.id}/members`)).items[0];
    expect(
      await eventsOf(async () =>
        expectError(await call(t, 'put', `/admin/v1/accounts/${account.id}/members/${owner.user_id}`, { role: 'member' }), 409, 'conflict'),
      ),
    ).toEqual([]);
  });

  it('acts in the console record the signed-in person: user id and email', async () => {
    const account = await newAccount(t);
    const project = await newProject(t, account.id, 'Console');
    const owner = (await admin(t, 'get', `/admin/v1/accounts/${account.id}/members`)).items[0] as { user_id: string; email: string };
    const s = await signedIn(t, owner.user_id);
    const person = await newUser(t);
    await addAccountMember(t, account.id, person.id, 'member');
    const me = { actor_type: 'user', actor_id: owner.user_id, actor_email: owner.email };

    let events = await eventsOf(async () => {
      const res = await post(`/console/accounts/${account.id}/keys`, s, {
        csrf: s.csrf,
        name: 'Mine',
        scope: 'read',
        project: project.id,
        [`role_${project.id}`]: 'viewer',
      });
      expect(res.status).toBe(201);
    });
    expect(events).toEqual([expect.objectContaining({ ...me, action: 'api_key.created', account_id: account.id })]);
    const keyId = events[0].target.credential_id as string;
    events = await eventsOf(async () => expect((await post(`/console/accounts/${account.id}/keys/${keyId}/revoke`, s, { csrf: s.csrf })).status).toBe(303));
    expect(events).toEqual([
      expect.objectContaining({
        ...me,
        action: 'api_key.revoked',
        change: expect.objectContaining({ after: expect.objectContaining({ revoked_reason: 'user' }) }),
      }),
    ]);

    events = await eventsOf(async () =>
      expect((await post(`/console/accounts/${account.id}/members/${person.id}/sign-in-link`, s, { csrf: s.csrf })).status).toBe(201),
    );
    expect(events).toEqual([expect.objectContaining({ ...me, action: 'login_link.created', account_id: account.id, target: { user_id: person.id } })]);

    events = await eventsOf(async () =>
      expect((await post(`/console/accounts/${account.id}/members/${person.id}/remove`, s, { csrf: s.csrf })).status).toBe(303),
    );
    expect(events).toEqual([expect.objectContaining({ ...me, action: 'account_member.removed', target: { user_id: person.id } })]);
  });

  it("the console's settings: a project's disabled tools and the writer's config, each one event of the owner", async () => {
    const account = await newAccount(t);
    const project = await newProject(t, account.id, 'Settings');
    const owner = (await admin(t, 'get', `/admin/v1/accounts/${account.id}/members`)).items[0] as { user_id: string; email: string };
    const s = await signedIn(t, owner.user_id);
    const me = { actor_type: 'user', actor_id: owner.user_id, actor_email: owner.email };
    const settings = `/console/accounts/${account.id}/projects/${project.id}/settings`;

    let events = await eventsOf(async () =>
      expect((await post(`${settings}/tools`, s, { csrf: s.csrf, tool: ['list_articles', 'get_article'], enabled: ['get_article'] })).status).toBe(303),
    );
    expect(events).toEqual([
      expect.objectContaining({
        ...me,
        action: 'project.updated',
        account_id: account.id,
        change: { before: { name: 'Settings', disabled_tools: [] }, after: { name: 'Settings', disabled_tools: ['list_articles'] } },
      }),
    ]);

    const writer = { audience: 'Home cooks', tone: 'Warm', language: 'en', topics: 'bread', length: 'short', banned_words: '', image_style: 'watercolour' };
    events = await eventsOf(async () => expect((await post(`${settings}/writer`, s, { csrf: s.csrf, ...writer })).status).toBe(303));
    expect(events).toEqual([
      expect.objectContaining({
        ...me,
        action: 'writer_config.saved',
        account_id: account.id,
        target: { project_id: project.id, agent: 'writer', version: '1', credential_id: null },
        change: { before: null, after: expect.objectContaining({ tone: 'Warm' }) },
      }),
    ]);
    // The same answers again make no version, and no event.
    expect(await eventsOf(async () => expect((await post(`${settings}/writer`, s, { csrf: s.csrf, ...writer })).status).toBe(303))).toEqual([]);

    // Over /mcp, the bearer credential saves it.
    const key = await newKey(t, account.id, [{ project_id: project.id, role: 'owner' }]);
    events = await eventsOf(() => callOk(t, key.key, 'configure_agent', { project_id: project.id, agent: 'writer', answers: { tone: 'Dry' } }));
    expect(events).toEqual([
      expect.objectContaining({
        actor_type: 'credential',
        actor_id: key.id,
        action: 'writer_config.saved',
        target: { project_id: project.id, agent: 'writer', version: '2', credential_id: key.id },
        change: { before: expect.objectContaining({ tone: 'Warm' }), after: expect.objectContaining({ tone: 'Dry' }) },
      }),
    ]);
  });

  it('OAuth: the consenting person makes the grant, the client that revokes its token revokes it', async () => {
    const { accountId, projectIds, user, session } = await consentingPerson(t, ['editor']);
    const client = await newClient(t);
    let tokens!: { access_token: string };
    let events = await eventsOf(async () => (tokens = await connectByOAuth(t, { client, session, projects: [{ project_id: projectIds[0], role: 'editor' }] })));
    expect(events).toEqual([
      expect.objectContaining({ action: 'grant.created', account_id: accountId, actor_type: 'user', actor_id: user.id, actor_email: user.email }),
    ]);
    expect(events[0].target).toEqual({ credential_id: expect.stringMatching(UUID), client_id: client.client_id });
    events = await eventsOf(async () => {
      const res = await t.http.post('/oauth/revoke').type('form').send({ token: tokens.access_token, client_id: client.client_id });
      expect(res.status).toBe(200);
    });
    expect(events).toEqual([expect.objectContaining({ action: 'grant.revoked', actor_type: 'client', actor_id: client.client_id, actor_email: null })]);
  });

  it('deleting an OAuth client records it in the account whose grants went with it', async () => {
    const account = await newAccount(t);
    const project = await newProject(t, account.id);
    const owner = (await admin(t, 'get', `/admin/v1/accounts/${account.id}/members`)).items[0] as { user_id: string };
    const client = await newClient(t);
    const grant = await oauthGrant(t, {
      accountId: account.id,
      userId: owner.user_id,
      clientId: client.client_id,
      projects: [{ project_id: project.id, role: 'viewer' }],
    });
    const events = await eventsOf(() => admin(t, 'delete', `/admin/v1/oauth-clients/${client.client_id}`, undefined, 204));
    expect(events).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'oauth_client.deleted',
        account_id: account.id,
        target: { client_id: client.client_id },
        change: { after: { revoked_grants: [grant.id] } },
      }),
    ]);
  });

  it("an account's trail shows its events only; filters by actor, action and time; cursor pages", async () => {
    const a = await newAccount(t);
    const b = await newAccount(t);
    for (const name of ['one', 'two', 'three']) await newProject(t, a.id, name);
    await newProject(t, b.id, 'other');

    const first = await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(2);
    const second = await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.next_cursor).toBeNull();
    const events = [...first.body.items, ...second.body.items] as Event[];
    // Newest first: three projects, then the account.
    expect(events.map((e) => e.action)).toEqual(['project.created', 'project.created', 'project.created', 'account.created']);
    expect(events.every((e) => e.account_id === a.id)).toBe(true);

    const projects = await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?action=project.created&actor=operator`);
    expect(projects.body.items).toHaveLength(3);
    expect((await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?actor=someone@example.com`)).body.items).toEqual([]);
    expect((await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?from=2999-01-01T00:00:00Z`)).body.items).toEqual([]);
    expect((await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?to=2999-01-01T00:00:00Z`)).body.items).toHaveLength(4);

    expectError(await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?action=nope`), 400, 'validation_failed');
    expectError(await call(t, 'get', `/admin/v1/accounts/${a.id}/audit?from=yesterday`), 400, 'validation_failed');
    expectError(await call(t, 'get', `/admin/v1/accounts/00000000-0000-4000-8000-000000000000/audit`), 404, 'not_found');
    expectError(await call(t, 'get', `/admin/v1/audit`, undefined, null), 401, 'unauthorized');
  });

  it('is append-only: the database refuses an UPDATE, a TRUNCATE and the DELETE of a recent event; an old one may be purged', async () => {
    const account = await newAccount(t);
    await withClient(t.config.databaseUrl!, async (c) => {
      await expect(c.query(`UPDATE audit_events SET action = 'x' WHERE account_id = $1`, [account.id])).rejects.toThrow(/append-only/);
      await expect(c.query(`DELETE FROM audit_events WHERE account_id = $1`, [account.id])).rejects.toThrow(/append-only/);
      await expect(c.query(`TRUNCATE audit_events`)).rejects.toThrow(/append-only/);
      await c.query(
        `INSERT INTO audit_events (id, at, account_id, actor_type, action) VALUES ('00000000-0000-4000-8000-00000000aaaa', now() - interval '500 days', $1, 'operator', 'project.created')`,
        [account.id],
      );
      const purged = await c.query(`DELETE FROM audit_events WHERE at < now() - interval '400 days'`);
      expect(purged.rowCount).toBe(1);
    });
    expect((await call(t, 'get', `/admin/v1/accounts/${account.id}/audit`)).body.items.map((e: Event) => e.action)).toEqual(['account.created']);
  });

  describe('the act and its event are one transaction', () => {
    afterEach(async () => {
      await withClient(t.config.databaseUrl!, async (c) => {
        await c.query(`DROP TRIGGER IF EXISTS audit_test_fail ON account_members`);
        await c.query(`DROP TRIGGER IF EXISTS audit_test_fail ON audit_events`);
        await c.query(`DROP FUNCTION IF EXISTS audit_test_fail()`);
      });
    });

    it('an act that fails after its event was written leaves neither', async () => {
      const account = await newAccount(t);
      const user = await newUser(t);
      // The act's own constraint, checked at commit: after the event's insert, in the same transaction.
      await withClient(t.config.databaseUrl!, async (c) => {
        await c.query(`CREATE FUNCTION audit_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced failure'; END $$`);
        await c.query(
          `CREATE CONSTRAINT TRIGGER audit_test_fail AFTER INSERT ON account_members DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
           WHEN (NEW.user_id = '${user.id}') EXECUTE FUNCTION audit_test_fail()`,
        );
      });
      const events = await eventsOf(async () =>
        expect((await call(t, 'put', `/admin/v1/accounts/${account.id}/members/${user.id}`, { role: 'member' })).status).toBe(500),
      );
      expect(events).toEqual([]);
      const members = await admin(t, 'get', `/admin/v1/accounts/${account.id}/members`);
      expect(members.items.map((m: { user_id: string }) => m.user_id)).not.toContain(user.id);
    });

    it('an event that cannot be written undoes its act', async () => {
      const account = await newAccount(t);
      const project = await newProject(t, account.id);
      await withClient(t.config.databaseUrl!, async (c) => {
        await c.query(`CREATE FUNCTION audit_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced failure'; END $$`);
        await c.query(
          `CREATE TRIGGER audit_test_fail BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.action = 'api_key.created') EXECUTE FUNCTION audit_test_fail()`,
        );
      });
      const res = await call(t, 'post', `/admin/v1/accounts/${account.id}/api-keys`, {
        name: 'x',
        scopes: ['read'],
        projects: [{ project_id: project.id, role: 'viewer' }],
      });
      expect(res.status).toBe(500);
      expect((await admin(t, 'get', `/admin/v1/accounts/${account.id}/api-keys`)).items).toEqual([]);
    });
  });
});
