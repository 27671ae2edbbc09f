import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../../src/common/ids.js';
import { hashSecret } from '../../src/auth/secrets.js';
import { withClient } from './database.js';
import { newAccountWithProjects } from './fixtures.js';
import { addAccountMember, addProjectMember, newUser, signedIn } from './people.js';
import type { TestApp } from './test-app.js';

/** A registered (dcr) client written straight into the table; `secret` is set for a confidential one. */
export async function newClient(
  t: TestApp,
  opts: { redirect_uris?: string[]; client_name?: string; auth?: 'none' | 'client_secret_post' | 'client_secret_basic' } = {},
): Promise<{ client_id: string; client_secret?: string; redirect_uris: string[] }> {
  const client_id = randomBytes(16).toString('hex');
  const redirect_uris = opts.redirect_uris ?? ['http://127.0.0.1:9999/callback'];
  const auth = opts.auth ?? 'none';
  const client_secret = auth === 'none' ? undefined : randomBytes(32).toString('base64url');
  await withClient(t.config.databaseUrl!, (c) =>
    c.query(
      `INSERT INTO oauth_clients (id, source, client_name, redirect_uris, token_endpoint_auth_method, secret_hash, metadata) VALUES ($1, 'dcr', $2, $3, $4, $5, $6)`,
      [
        client_id,
        opts.client_name ?? 'Test client',
        redirect_uris,
        auth,
        client_secret ? hashSecret(client_secret) : null,
        { redirect_uris, client_name: opts.client_name ?? 'Test client' },
      ],
    ),
  );
  return { client_id, client_secret, redirect_uris };
}

/**
 * An OAuth grant of a person written straight into the tables (the consent page's test makes them
 * through the pages): an access token valid for `ttlS` seconds. Answers the token and the grant's id.
 */
export async function oauthGrant(
  t: TestApp,
  opts: {
    accountId: string;
    userId: string;
    clientId: string;
    clientName?: string;
    projects: { project_id: string; role: 'viewer' | 'editor' | 'owner' }[];
    scopes?: string[];
    ttlS?: number;
  },
): Promise<{ token: string; id: string }> {
  const id = newId();
  const token = 'rbg_' + randomBytes(32).toString('base64url');
  await withClient(t.config.databaseUrl!, async (c) => {
    await c.query('BEGIN');
    await c.query(
      `INSERT INTO credentials (id, account_id, type, name, secret_hash, secret_prefix, scopes, source, user_id, client_id, via)
       VALUES ($1, $2, 'grant', $3, NULL, $4, $5, 'oauth', $6, $7, 'consent')`,
      [
        id,
        opts.accountId,
        opts.clientName ?? 'Test client',
        token.slice(0, 12),
        opts.scopes ?? ['read', 'write', 'generate', 'delete'],
        opts.userId,
        opts.clientId,
      ],
    );
    for (const p of opts.projects) {
      await c.query(`INSERT INTO credential_projects (credential_id, project_id, account_id, role) VALUES ($1, $2, $3, $4)`, [
        id,
        p.project_id,
        opts.accountId,
        p.role,
      ]);
    }
    await c.query(
      `INSERT INTO oauth_tokens (token_hash, credential_id, kind, client_id, expires_at) VALUES ($1, $2, 'access', $3, now() + make_interval(secs => $4))`,
      [hashSecret(token), id, opts.clientId, opts.ttlS ?? 3600],
    );
    await c.query('COMMIT');
  });
  return { token, id };
}

// The OAuth flow over HTTP, as a client and a person in a browser go through it: PKCE, the authorize
// request, the consent page's form, the code and the token exchange.

/** A PKCE pair (RFC 7636): a random verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The query of an authorize request; `undefined` leaves a parameter out. */
export function authorizeQuery(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.append(k, v);
  return query.toString();
}

/** A valid authorize request of `client` (S256 challenge of `pkce`), with `extra` on top. */
export function authorizeParams(
  client: { client_id: string; redirect_uris: string[] },
  pkce: { challenge: string },
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state: 'st-' + randomBytes(6).toString('hex'),
    ...extra,
  };
}

/** The consent page as served, with the hidden fields its form posts back. */
export interface ConsentPage {
  status: number;
  text: string;
  headers: Record<string, string>;
  requestId: string;
  csrf: string;
  accountId: string;
}

/** Reads the hidden fields of a consent page. */
export function consentFields(text: string): { requestId: string; csrf: string; accountId: string } {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(text)?.[1] ?? '';
  return { requestId: field('request_id'), csrf: field('csrf'), accountId: field('account_id') };
}

/** `GET /oauth/authorize` in the person's browser session. */
export async function openConsent(t: Pick<TestApp, 'http'>, session: { cookie: string }, params: Record<string, string | undefined>): Promise<ConsentPage> {
  const res = await t.http
    .get(`/oauth/authorize?${authorizeQuery(params)}`)
    .set('Cookie', session.cookie)
    .redirects(0);
  return { status: res.status, text: res.text, headers: res.headers as Record<string, string>, ...consentFields(res.text) };
}

/** `POST /oauth/consent` with these fields (arrays repeat a field), as the browser sends the form. */
export function postConsent(
  t: Pick<TestApp, 'http'>,
  session: { cookie: string },
  fields: Record<string, string | string[] | undefined>,
  headers: Record<string, string> = {},
) {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const value of v === undefined ? [] : Array.isArray(v) ? v : [v]) body.append(k, value);
  const req = t.http.post('/oauth/consent').set('Cookie', session.cookie).type('form').redirects(0);
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  return req.send(body.toString());
}

/** The consent form's fields approving `projects` with `scopes`, as a person ticks them. */
export function approval(
  page: Pick<ConsentPage, 'requestId' | 'csrf' | 'accountId'>,
  session: { csrf: string },
  projects: { project_id: string; role: string }[],
  scopes: string[],
): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {
    request_id: page.requestId,
    csrf: session.csrf,
    account_id: page.accountId,
    scope: scopes,
    project: projects.map((p) => p.project_id),
    decision: 'approve',
  };
  for (const p of projects) fields[`role_${p.project_id}`] = p.role;
  return fields;
}

/** The parameters of a redirect to the client (a code, or an error), from its Location. */
export function redirectParams(location: string): Record<string, string> {
  const query = location.slice(location.indexOf('?') + 1);
  return Object.fromEntries(new URLSearchParams(query));
}

/**
 * Goes through authorize and consent in a signed-in session and answers the code, with the verifier
 * and the redirect URI the token request needs.
 */
export async function authorizeCode(
  t: Pick<TestApp, 'http'>,
  opts: {
    client: { client_id: string; redirect_uris: string[] };
    session: { cookie: string; csrf: string };
    projects: { project_id: string; role: string }[];
    scopes?: string[];
    extra?: Record<string, string | undefined>;
  },
): Promise<{ code: string; verifier: string; redirect_uri: string; state: string; params: Record<string, string> }> {
  const pkce = pkcePair();
  const params = authorizeParams(opts.client, pkce, opts.extra);
  const page = await openConsent(t, opts.session, params);
  if (page.status !== 200) throw new Error(`The consent page answered ${page.status}: ${page.text.slice(0, 500)}`);
  const res = await postConsent(t, opts.session, approval(page, opts.session, opts.projects, opts.scopes ?? ['read', 'write', 'generate', 'delete']));
  if (res.status !== 302) throw new Error(`The consent post answered ${res.status}: ${res.text.slice(0, 500)}`);
  const answer = redirectParams(res.headers.location);
  if (!answer.code) throw new Error(`The consent post redirected without a code: ${res.headers.location}`);
  return { code: answer.code, verifier: pkce.verifier, redirect_uri: params.redirect_uri!, state: params.state!, params: answer };
}

/** `POST /oauth/token` with these form fields (and a Basic header when `basic` is given). */
export function tokenRequest(t: Pick<TestApp, 'http'>, fields: Record<string, string | undefined>, basic?: { id: string; secret: string }) {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.append(k, v);
  const req = t.http.post('/oauth/token').type('form');
  if (basic) req.set('Authorization', `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString('base64')}`);
  return req.send(body.toString());
}

/** The tokens of a connection made through authorize, consent and the code exchange (a public client). */
export async function connectByOAuth(
  t: Pick<TestApp, 'http'>,
  opts: Parameters<typeof authorizeCode>[1] & { client: { client_id: string; client_secret?: string; redirect_uris: string[] } },
): Promise<{ access_token: string; refresh_token: string; scope: string; expires_in: number }> {
  const { code, verifier, redirect_uri } = await authorizeCode(t, opts);
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri,
    client_id: opts.client.client_id,
    client_secret: opts.client.client_secret,
  });
  if (res.status !== 200) throw new Error(`The token request answered ${res.status}: ${res.text}`);
  return res.body;
}

/**
 * A person ready to consent: a new account with one project per role given, the person a member
 * with those project roles (`owner` makes them the account's owner instead), and a browser session.
 */
export async function consentingPerson(
  t: TestApp,
  roles: ('viewer' | 'editor' | 'owner')[] = ['editor', 'viewer'],
): Promise<{ accountId: string; projectIds: string[]; user: { id: string; email: string }; session: { cookie: string; csrf: string } }> {
  const { accountId, projectIds } = await newAccountWithProjects(
    t,
    roles.map((_, i) => ({ name: `Project ${i + 1}` })),
  );
  const user = await newUser(t);
  await addAccountMember(t, accountId, user.id, roles.includes('owner') ? 'owner' : 'member');
  for (const [i, role] of roles.entries()) if (role !== 'owner') await addProjectMember(t, accountId, projectIds[i], user.id, role);
  return { accountId, projectIds, user, session: await signedIn(t, user.id) };
}

/** The registration bodies the clients send, as they send them (test/oauth/registration.e2e-spec.ts; the issue's closing note lists what each did). */
export const REAL_BODIES = {
  cursor: {
    client_name: 'Cursor',
    redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'https://www.cursor.com/agents/mcp/oauth/callback', 'http://127.0.0.1:60123/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'read write generate delete',
  },
  claude: {
    client_name: 'Claude',
    redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
    scope: 'read write generate delete',
  },
  chatgpt: {
    client_name: 'ChatGPT',
    redirect_uris: ['https://chatgpt.com/connector/oauth/c2hhcmVkLWNvbm5lY3Rvcg'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  loopback: {
    client_name: 'Claude Code (reblog)',
    redirect_uris: ['http://127.0.0.1:53682/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    client_uri: 'https://claude.com/claude-code',
    software_id: 'claude-code',
    software_version: '2.1.0',
  },
} as const;

/** A self-signed certificate for `localhost`, 127.0.0.1 and ::1, made with openssl in a temp folder (`certPath` for NODE_EXTRA_CA_CERTS). */
export function selfSignedCert(): { key: string; cert: string; certPath: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'reblog-cimd-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`);
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath, dir };
}

/** A route of a {@link documentServer}: what it answers at a path. */
export type DocumentRoute = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * An https server on loopback serving client metadata documents from `routes` (changeable while it
 * runs); it counts TCP connections and records the requests it got.
 */
export async function documentServer(tls: { key: string; cert: string }): Promise<{
  port: number;
  /** https://127.0.0.1:<port><path> */
  url(path: string, host?: string): string;
  routes: Map<string, DocumentRoute>;
  requests: string[];
  connections(): number;
  close(): Promise<void>;
}> {
  const routes = new Map<string, DocumentRoute>();
  const requests: string[] = [];
  let connections = 0;
  const server = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    requests.push(req.url ?? '');
    const route = routes.get(req.url ?? '');
    if (route) return route(req, res);
    res.writeHead(404).end();
  });
  server.on('connection', () => connections++);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path, host = '127.0.0.1') => `https://${host}:${port}${path}`,
    routes,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A route answering `document` as JSON with these headers. */
export function jsonRoute(document: unknown, headers: Record<string, string> = {}): DocumentRoute {
  return (_req, res) => {
    const body = JSON.stringify(document);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers }).end(body);
  };
}
