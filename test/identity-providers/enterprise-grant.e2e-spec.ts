import { Client, CrossAppAccessProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { freePort } from '../../src/common/net.js';
import { OAuthPurgeService } from '../../src/oauth/oauth-purge.service.js';
import { eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { rpc, toolJson } from '../support/mcp-client.js';
import { addAccountMember, addProjectMember, newUser } from '../support/people.js';
import { TestIdp } from '../support/test-idp.js';
import type { TestApp } from '../support/test-app.js';

// Enterprise-managed authorization (docs/oauth.md#enterprise-managed-authorization): an ID-JAG from
// the account's identity provider exchanged at /oauth/token (RFC 7523), on two instances of one
// deployment (one PUBLIC_URL, one database), and every refusal on its own.
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('the ID-JAG grant (jwt-bearer at /oauth/token)', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let idp: TestIdp;
  let issuer: string;
  let accountId: string;
  let projectIds: string[];
  let person: { id: string; email: string };
  let client: { client_id: string; client_secret: string };

  beforeAll(async () => {
    idp = await TestIdp.start();
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    const env = { PUBLIC_URL: issuer, OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' };
    ({
      db,
      apps: [a, b],
    } = await startInstances({ ...env, PORT: String(port) }, env));
    ({ accountId, projectIds } = await newAccountWithProjects(a, [{ name: 'Blog' }, { name: 'Docs' }, { name: 'Hidden' }]));
    person = await newUser(a);
    await addAccountMember(a, accountId, person.id, 'member');
    await addProjectMember(a, accountId, projectIds[0], person.id, 'editor');
    await addProjectMember(a, accountId, projectIds[1], person.id, 'viewer');
    await admin(a, 'post', `/admin/v1/accounts/${accountId}/identity-providers`, { issuer: idp.issuer }, 201);
    client = await register(a, [JWT_BEARER]);
  });
  afterAll(async () => {
    await db?.drop();
    await idp?.close();
  });

  async function register(t: TestApp, extraGrantTypes: string[]): Promise<{ client_id: string; client_secret: string }> {
    const res = await t.http.post('/oauth/register').send({
      client_name: 'Enterprise agent',
      redirect_uris: ['http://127.0.0.1:9999/callback'],
      grant_types: ['authorization_code', 'refresh_token', ...extraGrantTypes],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(res.status).toBe(201);
    return { client_id: res.body.client_id, client_secret: res.body.client_secret };
  }

  /** An ID-JAG for `person` and `client`, as the identity provider signs it; `claims` override. */
  const idJag = (claims: Record<string, unknown> = {}, options: Parameters<TestIdp['idJag']>[1] = {}) =>
    idp.idJag({ sub: `idp-${person.id}`, email: person.email, aud: issuer, client_id: client.client_id, resource: `${issuer}/mcp`, ...claims }, options);
  const exchange = (t: TestApp, assertion: string, extra: Record<string, string> = {}, who = client) =>
    t.http
      .post('/oauth/token')
      .auth(who.client_id, who.client_secret)
      .type('form')
      .send({ grant_type: JWT_BEARER, assertion, ...extra });
  const refused = async (res: Awaited<ReturnType<typeof exchange>>, error: string, description: RegExp) => {
    expect(res.status).toBe(error === 'unauthorized_client' ? 400 : 400);
    expect(res.body).toEqual({ error, error_description: expect.stringMatching(description) });
  };
  const grantOf = async (accessToken: string) => {
    const grants = await admin(a, 'get', `/admin/v1/accounts/${accountId}/grants?limit=100`, undefined, 200);
    return grants.items.find((g: any) => accessToken.startsWith(g.token_prefix));
  };

  it('the metadata names the grant type and the ID-JAG profile', async () => {
    const res = await b.http.get('/.well-known/oauth-authorization-server');
    expect(res.body.grant_types_supported).toEqual(['authorization_code', 'refresh_token', JWT_BEARER]);
    expect(res.body.authorization_grant_profiles_supported).toEqual(['urn:ietf:params:oauth:grant-profile:id-jag']);
  });

  it('the SDK client (CrossAppAccessProvider) connects with an ID-JAG on one instance, a raw exchange works on the other, and the ID-JAG is refused there as replayed', async () => {
    const seen: { authorizationServerUrl: string; resourceUrl: string }[] = [];
    const spent: string[] = [];
    const provider = new CrossAppAccessProvider({
      clientId: client.client_id,
      clientSecret: client.client_secret,
      expectedIssuer: issuer,
      assertion: async (ctx) => {
        seen.push({ authorizationServerUrl: ctx.authorizationServerUrl, resourceUrl: ctx.resourceUrl });
        const jag = await idJag({ aud: ctx.authorizationServerUrl, resource: ctx.resourceUrl, scope: 'read write' });
        spent.push(jag);
        return jag;
      },
    });
    const sdk = new Client({ name: 'enterprise-agent', version: '1.0.0' });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${a.baseUrl}/mcp`), { authProvider: provider }));
    try {
      expect(seen).toEqual([{ authorizationServerUrl: issuer, resourceUrl: `${issuer}/mcp` }]);
      const tools = (await sdk.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(['list_projects', 'create_article']));
      expect(tools).not.toContain('delete_article');
      const listed = await sdk.callTool({ name: 'list_projects', arguments: {} });
      const projects = (toolJson(listed).items as { id: string; role: string }[]).map((p) => [p.id, p.role]).sort();
      expect(projects).toEqual(
        [
          [projectIds[0], 'editor'],
          [projectIds[1], 'viewer'],
        ].sort(),
      );
      // The grant: an OAuth grant like a consented one, made via the enterprise's identity provider.
      const token = provider.tokens()!.access_token;
      expect(provider.tokens()!.refresh_token).toBeUndefined();
      expect(await grantOf(token)).toMatchObject({
        source: 'oauth',
        via: 'enterprise',
        user_id: person.id,
        client_id: client.client_id,
        scopes: ['read', 'write'],
      });
    } finally {
      await sdk.close();
    }

    // The other instance: the same ID-JAG again is a replay; a new one is exchanged there.
    await refused(await exchange(b, spent[0]), 'invalid_grant', /was exchanged already/);
    const res = await exchange(b, await idJag({ scope: 'read' }));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(res.body).toEqual({ access_token: expect.stringMatching(/^rbg_/), token_type: 'Bearer', expires_in: expect.any(Number), scope: 'read' });
    const onB = new Client({ name: 'enterprise-agent-b', version: '1.0.0' });
    await onB.connect(
      new StreamableHTTPClientTransport(new URL(`${b.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${res.body.access_token}` } } }),
    );
    try {
      const tools = (await onB.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('list_projects');
      expect(tools).not.toContain('create_article');
      const listed = await onB.callTool({ name: 'list_projects', arguments: {} });
      expect(toolJson(listed).items).toHaveLength(2);
    } finally {
      await onB.close();
    }
  });

  it('records the grant in the audit trail: the client acted, for the person, via the identity provider', async () => {
    const res = await exchange(a, await idJag());
    expect(res.status).toBe(200);
    const grant = await grantOf(res.body.access_token);
    const trail = await admin(a, 'get', `/admin/v1/accounts/${accountId}/audit?action=grant.created&limit=100`, undefined, 200);
    const event = trail.items.find((e: any) => e.target.credential_id === grant.id);
    expect(event).toMatchObject({
      actor_type: 'client',
      actor_id: client.client_id,
      target: { credential_id: grant.id, client_id: client.client_id, user_id: person.id },
      change: { after: { via: 'enterprise', issuer: idp.issuer, scopes: ['read', 'write', 'generate', 'delete'] } },
    });
  });

  it('scopes are those asked for that the ID-JAG allows', async () => {
    const res = await exchange(a, await idJag({ scope: 'read write' }), { scope: 'read delete' });
    expect(res.body.scope).toBe('read');
    await refused(await exchange(a, await idJag({ scope: 'read' }), { scope: 'delete' }), 'invalid_scope', /None of the scopes asked for \(delete\)/);
  });

  describe('each refusal', () => {
    it('wrong typ', async () => {
      await refused(await exchange(a, await idJag({}, { typ: 'JWT' })), 'invalid_grant', /typ header must be oauth-id-jag\+jwt/);
    });

    it('signed with a key that is not in the identity provider’s key set', async () => {
      const stranger = await idp.newKey();
      await refused(await exchange(a, await idJag({}, { key: stranger })), 'invalid_grant', /signed with a key that is not among the keys of/);
    });

    it('an issuer no account trusts', async () => {
      await refused(
        await exchange(a, await idJag({ iss: 'https://other-idp.example' })),
        'invalid_grant',
        /issuer https:\/\/other-idp.example is not an identity provider/,
      );
    });

    it('an aud other than this server', async () => {
      await refused(await exchange(a, await idJag({ aud: 'https://elsewhere.example' })), 'invalid_grant', /aud must be this server's issuer/);
    });

    it('issued to another client', async () => {
      await refused(await exchange(a, await idJag({ client_id: 'someone-else' })), 'invalid_grant', /issued to the client "someone-else"/);
    });

    it('a resource other than this MCP endpoint', async () => {
      await refused(
        await exchange(a, await idJag({ resource: 'https://elsewhere.example/mcp' })),
        'invalid_grant',
        /resource is "https:\/\/elsewhere.example\/mcp"/,
      );
    });

    it('expired (past the 60 s skew)', async () => {
      const now = Math.floor(Date.now() / 1000);
      await refused(await exchange(a, await idJag({ iat: now - 200, exp: now - 100 })), 'invalid_grant', /has expired \(exp\)/);
    });

    it('issued more than 5 minutes ago, or in the future', async () => {
      const now = Math.floor(Date.now() / 1000);
      await refused(await exchange(a, await idJag({ iat: now - 400, exp: now + 300 })), 'invalid_grant', /issued more than 300 s ago/);
      await refused(await exchange(a, await idJag({ iat: now + 120, exp: now + 400 })), 'invalid_grant', /iat is in the future/);
    });

    it('sent to both instances at once: one exchanges it, the other is refused', async () => {
      const jag = await idJag();
      const answers = await Promise.all([exchange(a, jag), exchange(b, jag)]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(answers.find((r) => r.status === 400)!.body.error_description).toMatch(/was exchanged already/);
    });

    it('replayed on the other instance', async () => {
      const jag = await idJag();
      expect((await exchange(a, jag)).status).toBe(200);
      await refused(await exchange(b, jag), 'invalid_grant', /was exchanged already/);
    });

    it('a person the account does not have', async () => {
      await refused(
        await exchange(a, await idJag({ email: 'nobody@example.com' })),
        'invalid_grant',
        /\(email nobody@example.com\) is not a member of an account that trusts/,
      );
      const outsider = await newUser(a);
      await refused(await exchange(a, await idJag({ email: outsider.email })), 'invalid_grant', /is not a member of an account that trusts/);
    });

    it('a disabled person', async () => {
      const other = await newUser(a);
      await addAccountMember(a, accountId, other.id, 'member');
      await admin(a, 'patch', `/admin/v1/users/${other.id}`, { disabled: true }, 200);
      await refused(await exchange(a, await idJag({ email: other.email })), 'invalid_grant', new RegExp(`The person ${other.email} is disabled`));
    });

    it('a scope outside ours', async () => {
      await refused(await exchange(a, await idJag({ scope: 'read admin' })), 'invalid_scope', /scope holds admin, which this server does not have/);
    });

    it('a client not registered for the jwt-bearer grant', async () => {
      const plain = await register(a, []);
      await refused(
        await exchange(a, await idJag({ client_id: plain.client_id }), {}, plain),
        'unauthorized_client',
        /not registered for the .*jwt-bearer grant/,
      );
    });

    it('a client whose secret is wrong', async () => {
      const res = await exchange(a, await idJag(), {}, { ...client, client_secret: 'wrong' });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    });
  });

  it('the grant follows the person: removed from the account, the next /mcp request with the token is 401 (at once on the instance that made the change, within a second on the other); revoked, likewise', async () => {
    // The other instance hears of the change by the database's NOTIFY: when it arrives, not before the
    // admin answer; a second is well under the principal cache's 3 s, so a change seen only on expiry fails.
    const soonRefused = (token: string) =>
      eventually(
        () => rpc(b, token, PING),
        (res) => res.status === 401,
        1_000,
        20,
      );
    const other = await newUser(a);
    await addAccountMember(a, accountId, other.id, 'member');
    await addProjectMember(a, accountId, projectIds[0], other.id, 'editor');
    const first = (await exchange(a, await idJag({ email: other.email }))).body.access_token;
    expect((await rpc(b, first, PING)).status).toBe(200);
    await admin(a, 'delete', `/admin/v1/accounts/${accountId}/members/${other.id}`, undefined, 204);
    expect((await rpc(a, first, PING)).status).toBe(401);
    expect((await soonRefused(first)).status).toBe(401);

    const second = (await exchange(a, await idJag())).body.access_token;
    // Both instances cached it: A's refusal below is its own cache dropped before the admin answer.
    for (const instance of [a, b]) expect((await rpc(instance, second, PING)).status).toBe(200);
    await admin(a, 'delete', `/admin/v1/grants/${(await grantOf(second)).id}`, undefined, 204);
    expect((await rpc(a, second, PING)).status).toBe(401);
    expect((await soonRefused(second)).status).toBe(401);
  });

  it('an unknown kid fetches the keys again (once): a rotated key is taken', async () => {
    const rotated = await idp.newKey();
    idp.published.push(rotated);
    // The keys were fetched at registration; a refetch waits a minute since then.
    await withClient(db.url, (c) => c.query(`UPDATE identity_providers SET jwks_fetched_at = now() - interval '2 minutes' WHERE issuer = $1`, [idp.issuer]));
    const before = idp.requests.filter((p) => p === '/jwks').length;
    const res = await exchange(b, await idJag({}, { key: rotated }));
    expect(res.status).toBe(200);
    // A key nobody has now: no refetch within the minute.
    const stranger = await idp.newKey();
    await refused(await exchange(a, await idJag({}, { key: stranger })), 'invalid_grant', /not among the keys/);
    expect(idp.requests.filter((p) => p === '/jwks').length - before).toBe(1);
  });

  it('unknown_people "add": a person the account lacks joins it as a member with no project role', async () => {
    const { accountId: adding } = await newAccountWithProjects(a, [{ name: 'Open' }]);
    const added = await admin(a, 'post', `/admin/v1/accounts/${adding}/identity-providers`, { issuer: idp.issuer, unknown_people: 'add' }, 201);
    const newcomer = `newcomer-${Date.now()}@example.com`;
    const res = await exchange(a, await idJag({ email: newcomer }));
    expect(res.status).toBe(200);
    const members = await admin(a, 'get', `/admin/v1/accounts/${adding}/members`, undefined, 200);
    expect(members.items).toEqual(expect.arrayContaining([expect.objectContaining({ email: newcomer, role: 'member' })]));
    const grants = await admin(a, 'get', `/admin/v1/accounts/${adding}/grants`, undefined, 200);
    expect(grants.items[0]).toMatchObject({ via: 'enterprise', projects: [] });
    await admin(a, 'delete', `/admin/v1/accounts/${adding}/identity-providers/${added.id}`, undefined, 204);
  });

  it('the purge forgets a jti 5 minutes after its ID-JAG expired, not before', async () => {
    await withClient(db.url, (c) =>
      c.query(
        `INSERT INTO id_jag_uses (issuer, jti, expires_at) VALUES ($1, 'old', now() - interval '6 minutes'), ($1, 'recent', now() - interval '4 minutes')`,
        [idp.issuer],
      ),
    );
    const purged = await b.app.get(OAuthPurgeService).purge();
    expect(purged.idJagUses).toBe(1);
    const left = await withClient(db.url, (c) => c.query(`SELECT jti FROM id_jag_uses WHERE jti IN ('old', 'recent')`));
    expect(left.rows).toEqual([{ jti: 'recent' }]);
  });

  describe('a private_key_jwt client (RFC 7523 §2.2) exchanging an ID-JAG', () => {
    let keyed: { client_id: string };
    let key: Awaited<ReturnType<typeof generateKeyPair>>;
    const assertion = (claims: Record<string, unknown> = {}, signer = key.privateKey) =>
      new SignJWT({ iss: keyed.client_id, sub: keyed.client_id, aud: `${issuer}/oauth/token`, jti: randomUUID(), ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'client-key' })
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(signer);
    const exchangeSigned = (t: TestApp, jag: string, clientAssertion: string) =>
      t.http.post('/oauth/token').type('form').send({
        grant_type: JWT_BEARER,
        assertion: jag,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: clientAssertion,
      });

    beforeAll(async () => {
      key = await generateKeyPair('ES256');
      const res = await a.http.post('/oauth/register').send({
        client_name: 'Keyed agent',
        redirect_uris: ['http://127.0.0.1:9999/callback'],
        grant_types: ['authorization_code', JWT_BEARER],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(key.publicKey)), kid: 'client-key', alg: 'ES256' }] },
      });
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('client_secret');
      keyed = { client_id: res.body.client_id };
    });

    it('authenticates with its signed assertion; the same assertion again is refused on the other instance', async () => {
      const signed = await assertion();
      const res = await exchangeSigned(a, await idJag({ client_id: keyed.client_id }), signed);
      expect(res.status).toBe(200);
      expect(await grantOf(res.body.access_token)).toMatchObject({ via: 'enterprise', client_id: keyed.client_id });
      const again = await exchangeSigned(b, await idJag({ client_id: keyed.client_id }), signed);
      expect(again.status).toBe(401);
      expect(again.body).toEqual({ error: 'invalid_client', error_description: expect.stringMatching(/was used already/) });
    });

    it('refuses an assertion signed by another key, for another audience, or none at all', async () => {
      const other = await generateKeyPair('ES256');
      for (const signed of [await assertion({}, other.privateKey), await assertion({ aud: 'https://elsewhere.example' })]) {
        const res = await exchangeSigned(a, await idJag({ client_id: keyed.client_id }), signed);
        expect(res.status).toBe(401);
        expect(res.body.error).toBe('invalid_client');
      }
      const bare = await a.http
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: JWT_BEARER, assertion: await idJag(), client_id: keyed.client_id });
      expect(bare.status).toBe(401);
      expect(bare.body.error_description).toMatch(/private_key_jwt/);
    });

    it('registration: private_key_jwt needs public keys as jwks', async () => {
      const base = { redirect_uris: ['http://127.0.0.1:9999/callback'], token_endpoint_auth_method: 'private_key_jwt' };
      const pair = await generateKeyPair('ES256', { extractable: true });
      for (const [body, message] of [
        [base, /must send its public keys as jwks/],
        [{ ...base, jwks_uri: 'https://client.example/jwks' }, /jwks_uri is not supported/],
        [{ ...base, jwks: { keys: [await exportJWK(pair.privateKey)] } }, /holds a private key/],
        [{ ...base, jwks: { keys: [] } }, /1 to 10 keys/],
      ] as const) {
        const res = await a.http.post('/oauth/register').send(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringMatching(message) });
      }
    });
  });

  it('person_claim "sub": the person bound to the issuer and subject by OIDC sign-in', async () => {
    const { accountId: bySub, projectIds: subProjects } = await newAccountWithProjects(a, [{ name: 'Sub' }]);
    const bound = await newUser(a);
    await addAccountMember(a, bySub, bound.id, 'member');
    await addProjectMember(a, bySub, subProjects[0], bound.id, 'viewer');
    await withClient(db.url, (c) => c.query(`UPDATE users SET oidc_issuer = $1, oidc_subject = 'emp-42' WHERE id = $2`, [idp.issuer, bound.id]));
    const sub = await admin(a, 'post', `/admin/v1/accounts/${bySub}/identity-providers`, { issuer: idp.issuer, person_claim: 'sub' }, 201);
    const res = await exchange(a, await idJag({ sub: 'emp-42', email: undefined }, { omit: ['email'] }));
    expect(res.status).toBe(200);
    const grants = await admin(a, 'get', `/admin/v1/accounts/${bySub}/grants`, undefined, 200);
    expect(grants.items[0]).toMatchObject({ via: 'enterprise', user_id: bound.id, projects: [{ project_id: subProjects[0], role: 'viewer' }] });
    await refused(await exchange(a, await idJag({ sub: 'emp-43' }, { omit: ['email'] })), 'invalid_grant', /has no email claim|not a member/);
    await admin(a, 'delete', `/admin/v1/accounts/${bySub}/identity-providers/${sub.id}`, undefined, 204);
  });
});
