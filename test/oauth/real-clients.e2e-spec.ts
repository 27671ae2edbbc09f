import { callOk } from '../support/mcp-client.js';
import {
  approval,
  authorizeParams,
  consentingPerson,
  openConsent,
  pkcePair,
  postConsent,
  REAL_BODIES,
  redirectParams,
  tokenRequest,
} from '../support/oauth.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The registration bodies of Cursor, Claude, ChatGPT and a loopback client (Claude Code), each taken
// through the whole flow at every redirect URI it registered: registration, the consent page (and
// the form-action its redirect needs), the code at that URI, the token exchange with the client's
// own authentication, a refresh, and /mcp reaching exactly the consented project.

/** The redirect URI an app asks for: the registered one, or for a loopback one, another port (RFC 8252 §7.3). */
const asked = (uri: string) => (uri.startsWith('http://127.0.0.1:') ? uri.replace(/:\d+\//, ':49152/') : uri);
const formAction = (uri: string) => (uri.startsWith('cursor:') ? 'cursor:' : new URL(uri).origin);

const CASES = Object.entries(REAL_BODIES).flatMap(([name, body]) => body.redirect_uris.map((uri) => [name, uri, body] as const));

describe('the real clients, end to end', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;

  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    person = await consentingPerson(t, ['editor', 'viewer']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(CASES)('%s at %s', async (_name, uri, body) => {
    const registered = await t.http.post('/oauth/register').send(body);
    expect(registered.status).toBe(201);
    const client = registered.body as { client_id: string; client_secret?: string; token_endpoint_auth_method: string };
    expect(Boolean(client.client_secret)).toBe(body.token_endpoint_auth_method !== 'none');

    const pkce = pkcePair();
    const redirectUri = asked(uri);
    const params = authorizeParams({ client_id: client.client_id, redirect_uris: [redirectUri] }, pkce, {
      scope: 'scope' in body ? body.scope : undefined,
      resource: `${t.config.publicUrl}/mcp`,
    });
    const page = await openConsent(t, person.session, params);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain(`form-action 'self' ${formAction(redirectUri)};`);
    expect(page.text).toContain(`<strong>${body.client_name}</strong> <span class="badge">unverified</span>`);

    const consent = await postConsent(t, person.session, approval(page, person.session, [{ project_id: person.projectIds[1], role: 'viewer' }], ['read']));
    expect(consent.status).toBe(302);
    expect(consent.headers.location.startsWith(`${redirectUri}?`)).toBe(true);
    const answer = redirectParams(consent.headers.location);
    expect(answer).toEqual({ code: expect.any(String), state: params.state, iss: t.config.publicUrl });

    const auth = client.client_secret ? { client_secret: client.client_secret } : {};
    const tokens = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: answer.code,
      code_verifier: pkce.verifier,
      redirect_uri: redirectUri,
      client_id: client.client_id,
      resource: `${t.config.publicUrl}/mcp`,
      ...auth,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('read');
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: client.client_id, ...auth });
    expect(refreshed.status).toBe(200);
    const projects = await callOk(t, refreshed.body.access_token, 'list_projects');
    expect(projects.items.map((p: any) => [p.id, p.role])).toEqual([[person.projectIds[1], 'viewer']]);
  });
});
