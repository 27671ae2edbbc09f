import { rmSync } from 'node:fs';
import { CimdFetchError, documentFreshnessS, fetchClientMetadataDocument } from '../../src/oauth/clients/cimd-fetch.js';
import { documentServer, jsonRoute, selfSignedCert } from '../support/oauth.js';

// The metadata-document fetch on its own (spec/oauth.md "Clients"): it dials only loopback, over https
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
    await expect(fetchClientMetadataDocument(server.url('/ok.json'), allowed())).resolves.toEqual({ body: { client_id: 'x' }, cacheControl: 'public, max-age=600' });
  });

  it('exactly 5 KiB is read', async () => {
    const pad = 'x'.repeat(5 * 1024 - '{"p":""}'.length);
    server.routes.set('/5k.json', jsonRoute({ p: pad }));
    await expect(fetchClientMetadataDocument(server.url('/5k.json'), allowed())).resolves.toMatchObject({ body: { p: pad } });
  });

  it.each([
    ['a redirect is not followed', '/redirect', (_q: any, res: any) => res.writeHead(302, { Location: '/ok.json' }).end(), /302 \(redirects are not followed\)/],
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
    it('a name resolving to loopback is refused before any connection', async () => {
      server.routes.set('/ok.json', jsonRoute({}));
      const connections = server.connections();
      const err = await fetchClientMetadataDocument(server.url('/ok.json', 'localhost'), { allowPrivateNetworks: false, ca: tls.cert }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CimdFetchError);
      expect((err as Error).message).toMatch(/localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);
      expect(server.connections()).toBe(connections);
    });

    it('an address literal is checked on the address actually connected: refused before a byte of the request is sent', async () => {
      const requests = server.requests.length;
      await expect(fetchClientMetadataDocument(server.url('/ok.json'), { allowPrivateNetworks: false, ca: tls.cert })).rejects.toThrow(/server is at 127\.0\.0\.1, which is not a public address/);
      await expect(fetchClientMetadataDocument(server.url('/ok.json', '[::ffff:127.0.0.1]'), { allowPrivateNetworks: false, ca: tls.cert })).rejects.toThrow(/not a public address/);
      expect(server.requests.length).toBe(requests);
    });
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
