import { rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { hostname } from 'node:os';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { SafeFetchError, documentFreshnessS, fetchClientMetadataDocument, safeFetchJson } from '../../src/common/safe-fetch.js';
import { documentServer, jsonRoute, selfSignedCert } from '../support/oauth.js';

// The metadata-document fetch on its own: it dials only loopback, over https
// with a certificate made here and trusted through the `ca` option (NODE_EXTRA_CA_CERTS is read when a
// process starts: test/oauth/cimd.e2e-spec.ts uses it with a server process of its own).
describe('fetchClientMetadataDocument', () => {
  let tls: ReturnType<typeof selfSignedCert>;
  let server: Awaited<ReturnType<typeof documentServer>>;
  const allowed = () => ({ allowPrivateNetworks: true, ca: tls.cert });

  beforeAll(async () => {
    tls = selfSignedCert();
    server = await documentServer(tls);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(tls.dir, { recursive: true, force: true });
  });

  it('fetches a JSON document with its Cache-Control', async () => {
    server.routes.set('/ok.json', jsonRoute({ client_id: 'x' }, { 'Cache-Control': 'public, max-age=600' }));
    await expect(fetchClientMetadataDocument(server.url('/ok.json'), allowed())).resolves.toEqual({
      body: { client_id: 'x' },
      cacheControl: 'public, max-age=600',
    });
  });

  it('exactly 5 KiB is read', async () => {
    const pad = 'x'.repeat(5 * 1024 - '{"p":""}'.length);
    server.routes.set('/5k.json', jsonRoute({ p: pad }));
    await expect(fetchClientMetadataDocument(server.url('/5k.json'), allowed())).resolves.toMatchObject({ body: { p: pad } });
  });

  it.each([
    [
      'a redirect is not followed',
      '/redirect',
      (_q: any, res: any) => res.writeHead(302, { Location: '/ok.json' }).end(),
      /302 \(redirects are not followed\)/,
    ],
    ['a 404', '/missing', (_q: any, res: any) => res.writeHead(404).end(), /answered 404/],
    ['a 500', '/broken', (_q: any, res: any) => res.writeHead(500).end('{}'), /answered 500/],
    ['a declared length over 5 KiB', '/big', jsonRoute({ p: 'x'.repeat(5 * 1024) }), /larger than 5120 bytes/],
    [
      'an undeclared (chunked) body over 5 KiB',
      '/chunked',
      (_q: any, res: any) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        for (let i = 0; i < 8; i++) res.write(' '.repeat(1024));
        res.end('{}');
      },
      /larger than 5120 bytes/,
    ],
    ['a body that is not JSON', '/html', (_q: any, res: any) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html></html>'), /not JSON/],
  ])('refused: %s', async (_what, path, route, message) => {
    server.routes.set(path, route);
    const before = server.requests.length;
    await expect(fetchClientMetadataDocument(server.url(path), allowed())).rejects.toThrow(message);
    if (path === '/redirect') expect(server.requests.slice(before)).toEqual(['/redirect']);
  });

  it('refused: a certificate nobody trusts (the fetch is verified https)', async () => {
    server.routes.set('/ok.json', jsonRoute({}));
    await expect(fetchClientMetadataDocument(server.url('/ok.json'), { allowPrivateNetworks: true })).rejects.toThrow(/could not be fetched \(.*certificate/);
  });

  it('refused: no complete answer within 5 s (headers sent, the body never ends)', async () => {
    server.routes.set('/slow', (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"client_id":');
    });
    const started = Date.now();
    await expect(fetchClientMetadataDocument(server.url('/slow'), allowed())).rejects.toThrow(/within 5 s/);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4_900);
    expect(took).toBeLessThan(7_000);
  }, 15_000);

  describe('without OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS', () => {
    // A plain TCP listener on 127.0.0.1 counts connections (not requests): a TLS ClientHello to a
    // private port, or a refused connection, is already what a port scanner needs.
    let listener: Server;
    let connections = 0;
    let port: number;
    beforeAll(async () => {
      listener = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
      port = (listener.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((done) => listener.close(() => done())));

    // Every spelling of this machine (and two private networks, never dialled: the check comes first).
    const LITERALS = [
      '127.0.0.1',
      '127.1',
      '0x7f.1',
      '2130706433',
      '127.255.255.254',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '0.0.0.0',
      '[::]',
      '[::ffff:0.0.0.0]',
      '10.0.0.1',
      '192.168.1.1',
    ];

    it.each(LITERALS)('%s: refused before any socket is opened', async (host) => {
      const err = await fetchClientMetadataDocument(`https://${host}:${port}/doc.json`, { allowPrivateNetworks: false }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SafeFetchError);
      expect((err as Error).message).toMatch(/^\S+ is not a public address$/);
      expect(connections).toBe(0);
    });

    it('a name resolving to loopback (localhost) is refused before any socket is opened', async () => {
      const err = await fetchClientMetadataDocument(`https://localhost:${port}/doc.json`, { allowPrivateNetworks: false }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SafeFetchError);
      expect((err as Error).message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/);
      // This machine's own name, which /etc/hosts may map to loopback too (or nothing resolves it).
      await expect(fetchClientMetadataDocument(`https://${hostname()}:${port}/doc.json`, { allowPrivateNetworks: false })).rejects.toBeInstanceOf(
        SafeFetchError,
      );
      expect(connections).toBe(0);
    });

    it('forty fetches at once, every form: not one connection', async () => {
      const hosts = [...LITERALS, 'localhost'];
      const fetches = Array.from({ length: 40 }, (_, i) =>
        fetchClientMetadataDocument(`https://${hosts[i % hosts.length]}:${port}/doc-${i}.json`, { allowPrivateNetworks: false }).catch((e: unknown) => e),
      );
      const errors = await Promise.all(fetches);
      expect(errors.every((e) => e instanceof SafeFetchError && /not a public address/.test(e.message))).toBe(true);
      expect(connections).toBe(0);
    });

    it('the same listener is reached when private networks are allowed (the count works)', async () => {
      await expect(fetchClientMetadataDocument(`https://127.0.0.1:${port}/doc.json`, { allowPrivateNetworks: true })).rejects.toThrow(/could not be fetched/);
      expect(connections).toBe(1);
      connections = 0;
    });
  });
});

// The same fetch serves identity providers (src/identity-providers/discovery.ts): plain http only to
// loopback, and only where private networks are allowed (the tests' identity provider).
describe('safeFetchJson: plain http', () => {
  let server: HttpServer;
  let port: number;
  let requests = 0;
  beforeAll(async () => {
    server = createHttpServer((_req, res) => {
      requests++;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('to loopback with private networks allowed: fetched', async () => {
    await expect(safeFetchJson(`http://127.0.0.1:${port}/doc.json`, { allowPrivateNetworks: true })).resolves.toMatchObject({ body: { ok: true } });
    expect(requests).toBe(1);
  });

  it('refused without private networks, and to any host that is not loopback, before any socket is opened', async () => {
    await expect(safeFetchJson(`http://127.0.0.1:${port}/doc.json`, { allowPrivateNetworks: false })).rejects.toThrow('it is not an https URL');
    await expect(safeFetchJson(`http://10.0.0.1:${port}/doc.json`, { allowPrivateNetworks: true })).rejects.toThrow('it is not an https URL');
    await expect(safeFetchJson(`http://idp.example.com/doc.json`, { allowPrivateNetworks: true })).rejects.toThrow('it is not an https URL');
    await expect(safeFetchJson(`ftp://127.0.0.1:${port}/doc.json`, { allowPrivateNetworks: true })).rejects.toThrow('it is not an https URL');
    expect(requests).toBe(1);
  });

  it('a larger limit when asked for (an identity provider’s keys), counted the same way', async () => {
    server.removeAllListeners('request');
    server.on('request', (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ p: 'x'.repeat(8 * 1024) })));
    await expect(safeFetchJson(`http://127.0.0.1:${port}/big.json`, { allowPrivateNetworks: true })).rejects.toThrow(/larger than 5120 bytes/);
    await expect(safeFetchJson(`http://127.0.0.1:${port}/big.json`, { allowPrivateNetworks: true, maxBytes: 64 * 1024 })).resolves.toBeTruthy();
  });
});

describe('documentFreshnessS', () => {
  it.each([
    [undefined, 300],
    ['max-age=600', 600],
    ['public, max-age=3600, immutable', 3600],
    ['max-age=60', 300],
    ['max-age=0', 300],
    ['max-age=999999', 86_400],
    ['no-store', 300],
    ['no-cache, max-age=3600', 300],
    ['private', 300],
    ['max-age=abc', 300],
    ['s-maxage=3600', 300],
  ])('Cache-Control %s: %i s', (header, seconds) => expect(documentFreshnessS(header)).toBe(seconds));
});
