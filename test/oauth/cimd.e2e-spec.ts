import { rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
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
import { freePort } from '../../src/common/net.js';
import { killAll, startServer, type ServerProcess } from '../support/server-process.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// Client ID Metadata Documents (README.md#client-metadata-documents). The fetch dials only loopback, over https
// with a certificate made here. A process trusts it through NODE_EXTRA_CA_CERTS, which Node reads when
// it starts, so the flow runs against a server process started with it (and with
// OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS=true, loopback being private): the production code path exactly,
// with no test hook in the server. The refusals without that setting run in this process's app.

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

/** The one sentence a client is told when its document could not be fetched, whatever the cause. */
const NOT_FETCHED = (url: string) => `The client_id "${url}" cannot be used: its client metadata document could not be fetched.`;
/** What a port scanner would read: an address, a refused connection, a TLS or HTTP detail. */
const DETAIL = /public address|resolves to|server is at|ECONNREFUSED|ECONNRESET|socket|TLS|certificate|answered|within 5 s|not JSON/i;

/** A plain TCP listener on 127.0.0.1 counting connections (not requests); `hold` keeps them open, unanswered. */
async function countingListener(hold = false) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    if (!hold) return socket.destroy();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    /** Ends every held connection: the fetches on them fail at once. */
    release: () => sockets.forEach((s) => s.destroy()),
    close: () => new Promise<void>((done) => (sockets.forEach((s) => s.destroy()), server.close(() => done()))),
  };
}

describe('metadata documents without OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let listener: Awaited<ReturnType<typeof countingListener>>;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000', OAUTH_CIMD_MAX_CONCURRENT_FETCHES: '100' });
    person = await consentingPerson(t, ['editor']);
    listener = await countingListener();
  });
  afterAll(async () => {
    await listener?.close();
    await t?.close();
  });

  const authorize = (clientId: string) =>
    openConsent(t, person.session, authorizeParams({ client_id: clientId, redirect_uris: ['http://127.0.0.1:5555/callback'] }, pkcePair()));

  it('forty authorize requests at once, with client ids on every spelling of a private address: no connection; the page says one sentence', async () => {
    // The URL forms a client_id may take (WHATWG-normal: 127.1, 0x7f.1 and [::ffff:127.0.0.1] are
    // spelt 127.0.0.1 and [::ffff:7f00:1] once normal), and a name that resolves to loopback.
    const hosts = ['127.0.0.1', '[::1]', '[::ffff:7f00:1]', '0.0.0.0', '[::]', '10.0.0.1', '192.168.1.1', 'localhost'];
    const ids = Array.from({ length: 40 }, (_, i) => `https://${hosts[i % hosts.length]}:${listener.port}/clients/${i}.json`);
    const pages = await Promise.all(ids.map((id) => authorize(id)));
    expect(listener.connections()).toBe(0);
    for (const [i, page] of pages.entries()) {
      expect({ id: ids[i], status: page.status, location: page.headers.location }).toEqual({ id: ids[i], status: 400, location: undefined });
      expect(page.text).toContain('its client metadata document could not be fetched.');
      expect(page.text).not.toMatch(DETAIL);
    }
    // Spellings that are not normal are refused as ids, before anything is resolved.
    for (const host of ['127.1', '0x7f.1', '[::ffff:127.0.0.1]', '2130706433']) {
      const page = await authorize(`https://${host}:${listener.port}/clients/x.json`);
      expect(page.status).toBe(400);
      expect(page.text).toContain('is not in its normal form');
    }
    expect(listener.connections()).toBe(0);
  });

  it('the token endpoint answers 401 invalid_client with the same sentence, and connects nowhere either', async () => {
    for (const host of ['127.0.0.1', '[::ffff:7f00:1]', '0.0.0.0', 'localhost']) {
      const id = `https://${host}:${listener.port}/token-client.json`;
      const res = await tokenRequest(t, {
        grant_type: 'authorization_code',
        code: 'x',
        code_verifier: 'v'.repeat(43),
        redirect_uri: 'http://127.0.0.1:5555/callback',
        client_id: id,
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: NOT_FETCHED(id) });
    }
    expect(listener.connections()).toBe(0);
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
    server = await startServer(
      { OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: tls.certPath, OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' },
      180_000,
    );
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
  const params = (id: string, extra: Record<string, string | undefined> = {}) =>
    authorizeParams({ client_id: id, redirect_uris: ['http://127.0.0.1:7777/callback'] }, pkcePair(), extra);
  const stored = (id: string) =>
    withClient(
      databaseUrl,
      async (c) =>
        (await c.query(`SELECT *, extract(epoch FROM document_fresh_until - document_fetched_at)::int AS fresh_s FROM oauth_clients WHERE id = $1`, [id]))
          .rows[0],
    );
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
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      code_verifier: pkce.verifier,
      redirect_uri: query.redirect_uri,
      client_id: url,
    });
    expect(res.status).toBe(200);
    expect((await rpc(t, res.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: url });
    expect(refreshed.status).toBe(200);
    expect(await stored(url)).toMatchObject({
      source: 'cimd',
      client_name: 'Claude Code',
      token_endpoint_auth_method: 'none',
      secret_hash: null,
      redirect_uris: document(url).redirect_uris,
      fresh_s: 600,
    });
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
    docs.routes.set(
      new URL(id).pathname,
      jsonRoute(document(id, { client_name: 'Renamed', redirect_uris: ['http://127.0.0.1/new'] }), { 'Cache-Control': 'max-age=600' }),
    );
    await sql(`UPDATE oauth_clients SET document_fresh_until = now() - interval '1 second' WHERE id = $1`, [id]);
    const page = await openConsent(t, person.session, params(id, { redirect_uri: 'http://127.0.0.1:1/new' }));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<strong>Renamed</strong>');
  });

  it('one sentence whatever made the fetch fail (closed port, a listener that hangs up, 404, not JSON), on the page and in invalid_client', async () => {
    const hangsUp = await countingListener();
    const closed = await freePort();
    const notJson = `/clients/${Math.random().toString(36).slice(2)}.json`;
    docs.routes.set(notJson, (_q, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html></html>'));
    const ids = [`https://127.0.0.1:${closed}/doc.json`, `https://127.0.0.1:${hangsUp.port}/doc.json`, docs.url('/clients/missing.json'), docs.url(notJson)];
    try {
      for (const id of ids) {
        const page = await openConsent(t, person.session, params(id));
        expect({ id, status: page.status }).toEqual({ id, status: 400 });
        expect(page.text).toContain('its client metadata document could not be fetched.');
        expect(page.text).not.toMatch(DETAIL);
        const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: id });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'invalid_client', error_description: NOT_FETCHED(id) });
      }
      expect(hangsUp.connections()).toBe(2);
    } finally {
      await hangsUp.close();
    }
  });

  it('a failed fetch is logged as a warning with the host and the reason, once per host and minute', async () => {
    const port = await freePort();
    const onLoopback = (i: number) => `https://127.0.0.1:${port}/logged/${i}.json`;
    for (let i = 0; i < 3; i++) expect((await openConsent(t, person.session, params(onLoopback(i)))).status).toBe(400);
    expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: onLoopback(3) })).status).toBe(401);
    // Another host has a line of its own; once it is out, every line about the first host is too.
    expect((await openConsent(t, person.session, params(`https://localhost:${port}/logged/0.json`))).status).toBe(400);
    await server.waitFor(new RegExp(`document of a client on localhost:${port} could not be used`), 10_000);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes(`on 127.0.0.1:${port} could not be used`));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 40, msg: expect.stringMatching(new RegExp(`127\\.0\\.0\\.1:${port}.*ECONNREFUSED`)) });
  });

  it('served stale up to 7 days when fetching it again fails; refused after', async () => {
    const id = serve();
    expect((await openConsent(t, person.session, params(id))).status).toBe(200);
    docs.routes.set(new URL(id).pathname, (_q, res) => res.writeHead(503).end());
    await sql(
      `UPDATE oauth_clients SET document_fresh_until = now() - interval '1 hour', document_fetched_at = now() - interval '6 days 23 hours' WHERE id = $1`,
      [id],
    );
    const stale = await openConsent(t, person.session, params(id));
    expect(stale.status).toBe(200);
    expect(fetches(id)).toBe(2);
    await sql(`UPDATE oauth_clients SET document_fetched_at = now() - interval '7 days 1 minute' WHERE id = $1`, [id]);
    const gone = await openConsent(t, person.session, params(id));
    expect(gone.status).toBe(400);
    expect(gone.text).toContain('its client metadata document could not be fetched.');
    expect(gone.text).not.toMatch(DETAIL);
  });
});

describe('metadata-document fetches at once: OAUTH_CIMD_MAX_CONCURRENT_FETCHES', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let slow: Awaited<ReturnType<typeof countingListener>>;
  beforeAll(async () => {
    // A listener on loopback that accepts and never answers holds a fetch open (private networks allowed here).
    t = await startTestApp({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_CIMD_MAX_CONCURRENT_FETCHES: '2', OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    person = await consentingPerson(t, ['editor']);
    slow = await countingListener(true);
  });
  afterAll(async () => {
    await slow?.close();
    await t?.close();
  });

  const id = (name: string) => `https://127.0.0.1:${slow.port}/clients/${name}.json`;
  const authorize = (clientId: string) =>
    openConsent(t, person.session, authorizeParams({ client_id: clientId, redirect_uris: ['http://127.0.0.1:5555/callback'] }, pkcePair()));

  it('past the cap: 503 with Retry-After, on the page and at the token endpoint; room again once the fetches end', async () => {
    const held = [authorize(id('a')), authorize(id('b'))];
    while (slow.connections() < 2) await new Promise((r) => setTimeout(r, 20));

    const page = await authorize(id('c'));
    expect(page.status).toBe(503);
    expect(Number(page.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(page.text).toContain('Too many client metadata documents are being fetched right now');
    const token = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: id('d') });
    expect(token.status).toBe(503);
    expect(Number(token.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(token.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringContaining('retry after') });

    slow.release();
    for (const ended of await Promise.all(held)) {
      expect(ended.status).toBe(400);
      expect(ended.text).toContain('its client metadata document could not be fetched.');
    }
    expect(slow.connections()).toBe(2);
    // Room again: the next one is fetched (and hangs up like the others).
    const next = authorize(id('e'));
    while (slow.connections() < 3) await new Promise((r) => setTimeout(r, 20));
    slow.release();
    expect((await next).status).toBe(400);
  });
});

describe('OAUTH_CLIENT_METADATA_DOCUMENTS=false', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_CLIENT_METADATA_DOCUMENTS: 'false', OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' });
    person = await consentingPerson(t, ['editor']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the metadata says client_id_metadata_document_supported: false, so clients register instead', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await t.http.get(path);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ client_id_metadata_document_supported: false, registration_endpoint: `${t.baseUrl}/oauth/register` });
    }
  });

  it('a URL client id is refused with a sentence saying so, on the page and at the token endpoint, and nothing is fetched', async () => {
    const path = `/clients/${Math.random().toString(36).slice(2)}.json`;
    const url = docs.url(path);
    docs.routes.set(path, jsonRoute(document(url)));
    const connections = docs.connections();
    const page = await openConsent(t, person.session, authorizeParams({ client_id: url, redirect_uris: ['http://127.0.0.1:7777/callback'] }, pkcePair()));
    expect(page.status).toBe(400);
    expect(page.text).toContain('this server does not accept those; the client can register itself instead (dynamic client registration).');
    const token = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: url });
    expect(token.status).toBe(401);
    expect(token.body).toEqual({
      error: 'invalid_client',
      error_description: `The client_id "${url}" is a client metadata document URL, and this server does not accept those; the client can register itself instead (dynamic client registration).`,
    });
    expect(docs.connections()).toBe(connections);
    // Registration works as ever.
    const registered = await t.http
      .post('/oauth/register')
      .set('Content-Type', 'application/json')
      .send({ redirect_uris: ['http://127.0.0.1/callback'], client_name: 'Fallback' });
    expect(registered.status).toBe(201);
  });
});
