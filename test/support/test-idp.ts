import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/** A signing key of the test provider: its private half and its public JWK (with `kid` and `alg`). */
export interface TestKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

/** What an ID-JAG is signed with, beyond its claims. */
export interface SignOptions {
  typ?: string;
  key?: TestKey;
  /** Claims to drop from the defaults. */
  omit?: string[];
}

/**
 * A company identity provider for the tests, on 127.0.0.1 over plain http (the loopback exception
 * of the issuer rule, docs/admin-api.md#identity-providers): its discovery document at
 * `/.well-known/openid-configuration`, its keys at `/jwks` (the published ones: a test may sign with a
 * key it does not publish), and `idJag()` signs an Identity Assertion JWT Authorization Grant.
 */
export class TestIdp {
  readonly keys: TestKey[] = [];
  /** Keys served at /jwks; by default every key made. */
  published: TestKey[] = [];
  /** Paths requested, in order. */
  readonly requests: string[] = [];
  /** A route answered instead of the default one. */
  readonly overrides = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  private server!: Server;
  issuer = '';

  static async start(): Promise<TestIdp> {
    const idp = new TestIdp();
    idp.server = createServer((req, res) => idp.answer(req, res));
    await new Promise<void>((resolve) => idp.server.listen(0, '127.0.0.1', resolve));
    idp.issuer = `http://127.0.0.1:${(idp.server.address() as AddressInfo).port}`;
    idp.published.push(await idp.newKey());
    return idp;
  }

  /** A new key, not published until a test adds it to `published`. */
  async newKey(): Promise<TestKey> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const kid = randomUUID();
    const key = { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
    this.keys.push(key);
    return key;
  }

  /** Signs an ID-JAG: `typ` oauth-id-jag+jwt, issued now, 5 minutes of life, the first published key; `claims` override. */
  idJag(claims: JWTPayload & Record<string, unknown>, options: SignOptions = {}): Promise<string> {
    const key = options.key ?? this.published[0];
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = { iss: this.issuer, jti: randomUUID(), iat: now, exp: now + 300, ...claims };
    for (const name of options.omit ?? []) delete payload[name];
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: options.typ ?? 'oauth-id-jag+jwt' }).sign(key.privateKey);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    this.requests.push(path);
    const override = this.overrides.get(path);
    if (override) {
      override(req, res);
      return;
    }
    const json = (body: unknown) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    };
    if (path === '/.well-known/openid-configuration') {
      return json({
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        jwks_uri: `${this.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        grant_types_supported: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      });
    }
    if (path === '/jwks') return json({ keys: this.published.map((k) => k.jwk) });
    res.writeHead(404);
    res.end();
  }
}
