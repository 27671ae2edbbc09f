import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { newAccountWithProjects } from '../support/fixtures.js';
import { approval, authorizeParams, newClient, openConsent, pkcePair, postConsent, redirectParams, type ConsentPage } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/oauth.md#consent: POST /oauth/consent. Every refusal issues no code.

describe('POST /oauth/consent', () => {
  let t: TestApp;
  let issuer: string;
  let client: Awaited<ReturnType<typeof newClient>>;
  let session: { cookie: string; csrf: string };
  let person: { id: string; email: string };
  let acme: { accountId: string; projectIds: string[] };
  let other: { accountId: string; projectIds: string[] };
  const pkce = pkcePair();

  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    issuer = t.config.publicUrl;
    acme = await newAccountWithProjects(t, [{ name: 'Blog' }, { name: 'Docs' }, { name: 'Not mine' }]);
    other = await newAccountWithProjects(t, [{ name: 'Elsewhere' }]);
    person = await newUser(t);
    await addAccountMember(t, acme.accountId, person.id, 'member');
    await addProjectMember(t, acme.accountId, acme.projectIds[0], person.id, 'editor');
    await addProjectMember(t, acme.accountId, acme.projectIds[1], person.id, 'viewer');
    session = await signedIn(t, person.id);
    client = await newClient(t, { client_name: 'Consent client', redirect_uris: ['https://app.example.com/cb'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  const db = () => t.app.get(DataSource);
  const codes = async () => (await db().query(`SELECT * FROM oauth_codes WHERE client_id = $1 ORDER BY created_at`, [client.client_id])) as any[];
  const open = (extra: Record<string, string | undefined> = {}, s = session) => openConsent(t, s, authorizeParams(client, pkce, extra));
  const blog = () => ({ project_id: acme.projectIds[0], role: 'editor' });

  /** A 403 page: no redirect, no code. */
  async function expectForbidden(res: { status: number; headers: Record<string, string>; text: string }, mention: RegExp) {
    const before = (await codes()).length;
    expect(res.status).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(mention);
    expect(res.text).not.toMatch(/code=/);
    expect((await codes()).length).toBe(before);
  }

  describe('approve', () => {
    it('302 to redirect_uri with code, state and iss; the code (hashed, 2 min) records who, which account, projects and roles, scopes, redirect, challenge, resource', async () => {
      const page = await open({ resource: `${issuer}/mcp/`, scope: 'read write' });
      const res = await postConsent(t, session, approval(page, session, [blog(), { project_id: acme.projectIds[1], role: 'viewer' }], ['read', 'write']));
      expect(res.status).toBe(302);
      expect(res.headers.location.startsWith('https://app.example.com/cb?')).toBe(true);
      const answer = redirectParams(res.headers.location);
      expect(answer).toEqual({ code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), state: expect.stringMatching(/^st-/), iss: issuer });
      const [row] = await db().query(`SELECT *, extract(epoch FROM expires_at - created_at) AS ttl FROM oauth_codes WHERE code_hash = $1`, [
        hashSecret(answer.code),
      ]);
      expect(row).toMatchObject({
        client_id: client.client_id,
        user_id: person.id,
        account_id: acme.accountId,
        redirect_uri: 'https://app.example.com/cb',
        code_challenge: pkce.challenge,
        resource: `${issuer}/mcp`,
        scopes: ['read', 'write'],
        projects: [blog(), { project_id: acme.projectIds[1], role: 'viewer' }],
        credential_id: null,
        used_at: null,
      });
      expect(Number(row.ttl)).toBe(120);
      expect(JSON.stringify(row)).not.toContain(answer.code);
    });

    it('a role lower than the person’s is kept', async () => {
      const page = await open();
      const res = await postConsent(t, session, approval(page, session, [{ project_id: acme.projectIds[0], role: 'viewer' }], ['read']));
      expect(res.status).toBe(302);
      expect((await codes()).at(-1).projects).toEqual([{ project_id: acme.projectIds[0], role: 'viewer' }]);
    });

    it('Origin: null (what a no-referrer page posts), its own origin, Sec-Fetch-Site same-origin are all fine', async () => {
      const variants: Record<string, string>[] = [
        { Origin: 'null' },
        { Origin: new URL(issuer).origin, 'Sec-Fetch-Site': 'same-origin' },
        { 'Sec-Fetch-Site': 'none' },
      ];
      for (const headers of variants) {
        const page = await open();
        const res = await postConsent(t, session, approval(page, session, [blog()], ['read']), headers);
        expect(res.status).toBe(302);
      }
    });

    it('two posts of one form at once: one code, the other is refused', async () => {
      const page = await open();
      const fields = approval(page, session, [blog()], ['read']);
      const before = (await codes()).length;
      const answers = await Promise.all([postConsent(t, session, fields), postConsent(t, session, fields)]);
      expect(answers.map((a) => a.status).sort()).toEqual([302, 403]);
      expect((await codes()).length).toBe(before + 1);
    });
  });

  describe('deny', () => {
    it('302 to redirect_uri with error=access_denied, state and iss; the request is used up', async () => {
      const page = await open();
      const res = await postConsent(t, session, { ...approval(page, session, [blog()], ['read']), decision: 'deny' });
      expect(res.status).toBe(302);
      const answer = redirectParams(res.headers.location);
      expect(answer).toEqual({ error: 'access_denied', error_description: expect.any(String), state: expect.stringMatching(/^st-/), iss: issuer });
      await expectForbidden(await postConsent(t, session, approval(page, session, [blog()], ['read'])), /already answered/);
    });
  });

  describe('403, no code', () => {
    let page: ConsentPage;
    beforeEach(async () => {
      page = await open();
    });

    it('no csrf', async () =>
      expectForbidden(await postConsent(t, session, { ...approval(page, session, [blog()], ['read']), csrf: undefined }), /security token/));
    it('a wrong csrf', async () =>
      expectForbidden(await postConsent(t, session, { ...approval(page, session, [blog()], ['read']), csrf: 'x'.repeat(32) }), /security token/));
    it('Sec-Fetch-Site: cross-site', async () =>
      expectForbidden(await postConsent(t, session, approval(page, session, [blog()], ['read']), { 'Sec-Fetch-Site': 'cross-site' }), /another site/));
    it('a foreign Origin', async () =>
      expectForbidden(await postConsent(t, session, approval(page, session, [blog()], ['read']), { Origin: 'https://evil.example' }), /evil\.example/));
    it('an Origin on another port of this host', async () =>
      expectForbidden(await postConsent(t, session, approval(page, session, [blog()], ['read']), { Origin: 'http://127.0.0.1:1' }), /posted from/));
    it('an unknown request_id', async () =>
      expectForbidden(await postConsent(t, session, { ...approval(page, session, [blog()], ['read']), request_id: 'nope' }), /unknown/));
    it('no request_id', async () =>
      expectForbidden(await postConsent(t, session, { ...approval(page, session, [blog()], ['read']), request_id: undefined }), /unknown/));
    it('an expired request (10 minutes)', async () => {
      await db().query(`UPDATE oauth_requests SET expires_at = now() - interval '1 second' WHERE id_hash = $1`, [hashSecret(page.requestId)]);
      await expectForbidden(await postConsent(t, session, approval(page, session, [blog()], ['read'])), /expired/);
    });
    it('a request already used', async () => {
      expect((await postConsent(t, session, approval(page, session, [blog()], ['read']))).status).toBe(302);
      await expectForbidden(await postConsent(t, session, approval(page, session, [blog()], ['read'])), /already answered/);
    });
    it("another session's request, even of the same person with that session's own csrf", async () => {
      const second = await signedIn(t, person.id);
      await expectForbidden(await postConsent(t, second, approval(page, second, [blog()], ['read'])), /another browser session/);
      // ...and it stays usable by the session that started it.
      expect((await postConsent(t, session, approval(page, session, [blog()], ['read']))).status).toBe(302);
    });
    it("another person's request", async () => {
      const intruder = await newUser(t);
      await addAccountMember(t, acme.accountId, intruder.id, 'owner');
      const theirs = await signedIn(t, intruder.id);
      await expectForbidden(await postConsent(t, theirs, approval(page, theirs, [blog()], ['read'])), /another browser session/);
    });
    it('not signed in', async () => expectForbidden(await postConsent(t, { cookie: '' }, approval(page, session, [blog()], ['read'])), /not signed in/));
  });

  describe('400, the page again with a message; the request stays usable', () => {
    async function expectAgain(fields: Record<string, string | string[] | undefined>, mention: RegExp, page: ConsentPage) {
      const before = (await codes()).length;
      const res = await postConsent(t, session, fields);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toMatch(mention);
      expect(res.text).toContain(`name="request_id" value="${page.requestId}"`);
      expect(res.headers['content-security-policy']).toContain("form-action 'self' https://app.example.com;");
      expect((await codes()).length).toBe(before);
      expect((await postConsent(t, session, approval(page, session, [blog()], ['read']))).status).toBe(302);
    }

    it('no project chosen', async () => {
      const page = await open();
      await expectAgain(approval(page, session, [], ['read']), /at least one project/, page);
    });
    it('no scope chosen', async () => {
      const page = await open();
      await expectAgain(approval(page, session, [blog()], []), /at least one thing/, page);
    });
    it('a role above the person’s (editor on a project where they are viewer)', async () => {
      const page = await open();
      await expectAgain(approval(page, session, [{ project_id: acme.projectIds[1], role: 'editor' }], ['read']), /above your own \(viewer\)/, page);
    });
    it('a role above the person’s (owner where they are editor)', async () => {
      const page = await open();
      await expectAgain(approval(page, session, [{ project_id: acme.projectIds[0], role: 'owner' }], ['read']), /above your own \(editor\)/, page);
    });
    it('a role that is no role', async () => {
      const page = await open();
      await expectAgain(approval(page, session, [{ project_id: acme.projectIds[0], role: 'admin' }], ['read']), /from the list/, page);
    });
    it('an account the person does not belong to', async () => {
      const page = await open();
      await expectAgain(
        { ...approval(page, session, [{ project_id: other.projectIds[0], role: 'viewer' }], ['read']), account_id: other.accountId },
        /one of your accounts/,
        page,
      );
    });
    it('no decision', async () => {
      const page = await open();
      await expectAgain({ ...approval(page, session, [blog()], ['read']), decision: undefined }, /Approve or Deny/, page);
    });
    it('keeps what the person ticked', async () => {
      const page = await open();
      const res = await postConsent(t, session, approval(page, session, [{ project_id: acme.projectIds[1], role: 'editor' }], ['read', 'delete']));
      expect(res.status).toBe(400);
      expect(res.text).toContain('name="scope" value="delete" checked');
      expect(res.text).toContain('name="scope" value="write">');
      expect(res.text).toContain(`name="project" value="${acme.projectIds[1]}" checked`);
    });
  });

  describe('forged fields never widen anything', () => {
    it('a scope that was not asked is dropped', async () => {
      const page = await open({ scope: 'read' });
      const res = await postConsent(t, session, approval(page, session, [blog()], ['read', 'write', 'delete', 'admin']));
      expect(res.status).toBe(302);
      expect((await codes()).at(-1).scopes).toEqual(['read']);
    });
    it('only scopes that were not asked: nothing left, 400', async () => {
      const page = await open({ scope: 'read' });
      const res = await postConsent(t, session, approval(page, session, [blog()], ['delete']));
      expect(res.status).toBe(400);
    });
    it("another account's project, or one of this account where the person has no role, is dropped", async () => {
      const page = await open();
      const res = await postConsent(
        t,
        session,
        approval(page, session, [blog(), { project_id: other.projectIds[0], role: 'owner' }, { project_id: acme.projectIds[2], role: 'viewer' }], ['read']),
      );
      expect(res.status).toBe(302);
      expect((await codes()).at(-1).projects).toEqual([blog()]);
    });
    it("only another account's project: nothing left, 400", async () => {
      const page = await open();
      const res = await postConsent(t, session, approval(page, session, [{ project_id: other.projectIds[0], role: 'viewer' }], ['read']));
      expect(res.status).toBe(400);
    });
    it('a project without its role field gets the person’s own role, never more', async () => {
      const page = await open();
      const fields = approval(page, session, [{ project_id: acme.projectIds[1], role: 'viewer' }], ['read']);
      delete fields[`role_${acme.projectIds[1]}`];
      expect((await postConsent(t, session, fields)).status).toBe(302);
      expect((await codes()).at(-1).projects).toEqual([{ project_id: acme.projectIds[1], role: 'viewer' }]);
    });
    it('a project listed twice counts once', async () => {
      const page = await open();
      const fields = approval(page, session, [blog()], ['read']);
      fields.project = [acme.projectIds[0], acme.projectIds[0]];
      expect((await postConsent(t, session, fields)).status).toBe(302);
      expect((await codes()).at(-1).projects).toEqual([blog()]);
    });
  });
});
