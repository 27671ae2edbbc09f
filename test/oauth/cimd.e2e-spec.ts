import { rmSync } from 'node:fs';
import { withClient } from '../support/database.js';
import { admin } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import {
  approval,
  authorizeParams,
  consentingPerson,
  documentServer,
  jsonRoute,
  openConsent,
  pkcePair,
  postConsent,
  redirectParams,
  selfSignedCert,
  tokenRequest,
} from '../support/oauth.js';
import { killAll, startServer, type ServerProcess } from '../support/server-process.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// spec/oauth.md "Clients": Client ID Metadata Documents. The fetch dials only loopback, over https
// with a certificate made here. A process trusts it through NODE_EXTRA_CA_CERTS, which Node reads when
// it starts, so the flow runs against a server process started with it (and with
// OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS=true, loopback being private): the production code path exactly,
// with no test hook in the server. The refusals without that setting run in this process's app.

const DOC_PATH = '/oauth/client-metadata.json';
const document = (url: string, extra: Record<string, unknown> = {}) => ({
  client_id: url,
  client_name: 'Claude Code',
  client_uri: 'https://claude.com/claude-code',
  redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  ...extra,
});

let tls: ReturnType<typeof selfSignedCert>;
let docs: Awaited<ReturnType<typeof documentServer>>;
beforeAll(async () => {
  tls = selfSignedCert();
  docs = await documentServer(tls);
});
afterAll(async () => {
  await docs?.close();
  if (tls) rmSync(tls.dir, { recursive: true, force: true });
});

describe('metadata documents without OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  beforeAll(async () => {
    t = await startTestApp();
    person = await consentingPerson(t, ['editor']);
  });
  afterAll(async () => {
    await t?.close();
  });

  const authorize = (clientId: string) => openConsent(t, person.session, authorizeParams({ client_id: clientId, redirect_uris: ['http://127.0.0.1:5555/callback'] }, pkcePair()));

  it('a document on a loopback address is refused (400 page, no redirect), and not a byte of the request reaches it', async () => {
    const url = docs.url(DOC_PATH);
    docs.routes.set(DOC_PATH, jsonRoute(document(url)));
    const requests = docs.requests.length;
    const page = await authorize(url);
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
    expect(page.text).toContain('is not a public address');
    expect(docs.requests.length).toBe(requests);
  });

  it('a name resolving to loopback is refused before it is dialled', async () => {
    const url = docs.url(DOC_PATH, 'localhost');
    const connections = docs.connections();
    const page = await authorize(url);
    expect(page.status).toBe(400);
    expect(page.text).toMatch(/localhost resolves to .*not a public address/);
    expect(docs.connections()).toBe(connections);
  });

  it.each([
    ['http', 'http://client.example.com/metadata.json', /No client is registered/],
    ['no path', 'https://client.example.com/', /must have a path/],
    ['a fragment', 'https://client.example.com/m.json#x', /fragment/],
    ['userinfo', 'https://user@client.example.com/m.json', /user name/],
    ['dot segments', 'https://client.example.com/a/../m.json', /normal form/],
  ])('a client_id URL with %s names no client (400 page), and nothing is fetched', async (_what, url, message) => {
    const page = await authorize(url);
    expect(page.status).toBe(400);
    expect(page.text).toMatch(message);
  });
});

describe('metadata documents through a server process (NODE_EXTRA_CA_CERTS, private networks allowed)', () => {
  let server: ServerProcess;
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let url: string;
  const databaseUrl = process.env.DATABASE_URL!;

  beforeAll(async () => {
    server = await startServer({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: tls.certPath, OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' }, 180_000);
    // The helpers write people straight into the run's database, which the process shares.
    t = { ...server, config: { databaseUrl, publicUrl: server.baseUrl } } as unknown as TestApp;
    person = await consentingPerson(t, ['editor', 'viewer']);
  }, 240_000);
  afterAll(async () => {
    await server?.close();
    await killAll();
  });

  /** A document of its own at a fresh path (so each test has its own client and cache row). */
  function serve(extra: Record<string, unknown> = {}, headers: Record<string, string> = { 'Cache-Control': 'max-age=600' }): string {
    const path = `/clients/${Math.random().toString(36).slice(2)}.json`;
    const id = docs.url(path);
    docs.routes.set(path, jsonRoute(document(id, extra), headers));
    return id;
  }
  const fetches = (id: string) => docs.requests.filter((r) => r === new URL(id).pathname).length;
  const params = (id: string, extra: Record<string, string | undefined> = {}) => authorizeParams({ client_id: id, redirect_uris: ['http://127.0.0.1:7777/callback'] }, pkcePair(), extra);
  const stored = (id: string) => withClient(databaseUrl, async (c) => (await c.query(`SELECT *, extract(epoch FROM document_fresh_until - document_fetched_at)::int AS fresh_s FROM oauth_clients WHERE id = $1`, [id])).rows[0]);
  const sql = (text: string, values: unknown[]) => withClient(databaseUrl, (c) => c.query(text, values));

  it('the whole flow: the consent page names the document’s host, the client gets a grant with no secret; stored as a cimd client', async () => {
    url = serve();
    const pkce = pkcePair();
    const query = authorizeParams({ client_id: url, redirect_uris: ['http://127.0.0.1:7777/callback'] }, pkce, { scope: 'read' });
    const page = await openConsent(t, person.session, query);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<strong>Claude Code</strong> <span class="badge">described by 127.0.0.1:${docs.port}</span>`);
    expect(page.text).not.toContain('unverified');
    const consent = await postConsent(t, person.session, approval(page, person.session, [{ project_id: person.projectIds[0], role: 'editor' }], ['read']));
    expect(consent.status).toBe(302);
    const { code } = redirectParams(consent.headers.location);
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: query.redirect_uri, client_id: url });
    expect(res.status).toBe(200);
    expect((await rpc(t, res.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: url });
    expect(refreshed.status).toBe(200);
    expect(await stored(url)).toMatchObject({ source: 'cimd', client_name: 'Claude Code', token_endpoint_auth_method: 'none', secret_hash: null, redirect_uris: document(url).redirect_uris, fresh_s: 600 });
    const [grant] = (await sql(`SELECT name, client_id FROM credentials WHERE client_id = $1`, [url])).rows;
    expect(grant).toEqual({ name: 'Claude Code', client_id: url });
    const listed = (await admin(t, 'get', '/admin/v1/oauth-clients?limit=200', undefined, 200)).items.find((i: any) => i.id === url);
    expect(listed).toMatchObject({ source: 'cimd', client_name: 'Claude Code' });
  });

  it('a redirect_uri the document does not list is the 400 page', async () => {
    const id = serve();
    const page = await openConsent(t, person.session, authorizeParams({ client_id: id, redirect_uris: ['https://evil.example/cb'] }, pkcePair()));
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
  });

  it.each([
    ['a client_id that is not its URL', { client_id: 'https://other.example/doc.json' }, /is not its own URL/],
    ['a confidential auth method', { token_endpoint_auth_method: 'client_secret_post' }, /only none is accepted/],
    ['a client_secret', { client_secret: 'shh' }, /client_secret/],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, /javascript: scheme/],
    ['no redirect URI', { redirect_uris: [] }, /at least one redirect URI/],
  ])('a document with %s is refused (400 page)', async (_what, extra, message) => {
    const id = serve(extra);
    const page = await openConsent(t, person.session, params(id));
    expect(page.status).toBe(400);
    expect(page.text).toMatch(message);
  });

  it('is cached per its Cache-Control: not fetched again while fresh, fetched again once stale', async () => {
    const id = serve();
    expect((await openConsent(t, person.session, params(id))).status).toBe(200);
    expect((await openConsent(t, person.session, params(id))).status).toBe(200);
    expect(fetches(id)).toBe(1);
    await sql(`UPDATE oauth_clients SET document_fresh_until = now() - interval '1 second' WHERE id = $1`, [id]);
    expect((await openConsent(t, person.session, params(id))).status).toBe(200);
    expect(fetches(id)).toBe(2);
  });

  it.each([
    ['max-age=60 is kept 5 minutes', { 'Cache-Control': 'max-age=60' }, 300],
    ['max-age of a week is kept 24 hours', { 'Cache-Control': 'max-age=604800' }, 86_400],
    ['no-store is kept 5 minutes', { 'Cache-Control': 'no-store' }, 300],
    ['no Cache-Control is kept 5 minutes', {}, 300],
    ['max-age=7200 is kept 2 hours', { 'Cache-Control': 'public, max-age=7200' }, 7200],
  ])('%s', async (_what, headers, seconds) => {
    const id = serve({}, headers);
    expect((await openConsent(t, person.session, params(id))).status).toBe(200);
    expect((await stored(id)).fresh_s).toBe(seconds);
  });

  it('a changed document is read when it is fetched again', async () => {
    const id = serve();
    expect((await openConsent(t, person.session, params(id, { redirect_uri: 'http://127.0.0.1:1/new' }))).status).toBe(400);
    docs.routes.set(new URL(id).pathname, jsonRoute(document(id, { client_name: 'Renamed', redirect_uris: ['http://127.0.0.1/new'] }), { 'Cache-Control': 'max-age=600' }));
    await sql(`UPDATE oauth_clients SET document_fresh_until = now() - interval '1 second' WHERE id = $1`, [id]);
    const page = await openConsent(t, person.session, params(id, { redirect_uri: 'http://127.0.0.1:1/new' }));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<strong>Renamed</strong>');
  });

  it('served stale up to 7 days when fetching it again fails; refused after', async () => {
    const id = serve();
    expect((await openConsent(t, person.session, params(id))).status).toBe(200);
    docs.routes.set(new URL(id).pathname, (_q, res) => res.writeHead(503).end());
    await sql(`UPDATE oauth_clients SET document_fresh_until = now() - interval '1 hour', document_fetched_at = now() - interval '6 days 23 hours' WHERE id = $1`, [id]);
    const stale = await openConsent(t, person.session, params(id));
    expect(stale.status).toBe(200);
    expect(fetches(id)).toBe(2);
    await sql(`UPDATE oauth_clients SET document_fetched_at = now() - interval '7 days 1 minute' WHERE id = $1`, [id]);
    const gone = await openConsent(t, person.session, params(id));
    expect(gone.status).toBe(400);
    expect(gone.text).toContain('answered 503');
  });
});
