import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { roleAtLeast, TOOL_NAMES } from '../../src/common/tool-names.js';
import { TOOL_TABLE } from '../mcp/mcp-e2e-helpers.js';
import { describeWithChromium, keepScreenshot, launchChromium, startCallbackServer, type CallbackServer } from '../support/browser.js';
import { eventually } from '../support/database.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { addAccountMember, addProjectMember, newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/oauth.md end to end, as a real client meets it: the official SDK client connects to /mcp with
// no token and finds its way (discovery, dynamic registration, PKCE); Debian's Chromium signs a
// person in (a login link pasted into the sign-in page) and consents (the consent page and its CSP);
// the loopback redirect URI gets the code, the SDK exchanges it, calls tools, refreshes an expired
// access token by itself, and a revoked grant is 401. The steps run in order; each `it` continues
// from the one before.

const CLIENT_NAME = 'SDK browser test';
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

/**
 * The OAuthClientProvider of a native app, in memory: it registers dynamically with a loopback
 * redirect URI, keeps what the SDK hands it, and records every authorization URL it is asked to open
 * (the test opens it in Chromium).
 */
class BrowserFlowProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  /** Every token answer the SDK saved, in order (the first from the code, then one per refresh). */
  readonly savedTokens: OAuthTokens[] = [];
  readonly stateValue = randomBytes(16).toString('base64url');
  client?: OAuthClientInformationMixed;
  discovery?: OAuthDiscoveryState;
  private current?: OAuthTokens;
  private verifier?: string;

  constructor(private readonly callbackUrl: string) {}

  get redirectUrl(): string {
    return this.callbackUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.current;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.current = tokens;
    this.savedTokens.push(tokens);
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.current = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}

/** What an earlier step left for this one; without it, fails saying so (rather than with a TypeError). */
function fromEarlierStep<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`An earlier step failed: there is no ${what}.`);
  return value;
}

/** Whether a CSP's form-action lets a form's redirect reach `origin` (the origin itself, its scheme, or any port of its host). */
function formActionAllows(csp: string, origin: string): boolean {
  const directive = csp
    .split(';')
    .map((d) => d.trim().split(/\s+/))
    .find(([name]) => name === 'form-action');
  if (!directive) return false;
  const { protocol, hostname } = new URL(origin);
  return directive.slice(1).some((source) => [origin, protocol, `${protocol}//${hostname}:*`].includes(source));
}

describeWithChromium('OAuth with the official SDK client and Chromium', () => {
  let t: TestApp;
  let issuer: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let callback: CallbackServer;
  let callbackUrl: string;
  let provider: BrowserFlowProvider;
  let person: TestUser;
  let accountId: string;
  /** The consented project, the other one offered, and one of the account the person has no role on. */
  let chosen: string, offered: string, hidden: string;
  let client: Client | undefined;
  let firstTransport: StreamableHTTPClientTransport;
  let code: string | undefined;

  const mcpUrl = () => new URL(`${issuer}/mcp`);

  beforeAll(async () => {
    browser = await launchChromium();
    callback = await startCallbackServer();
    callbackUrl = `${callback.origin}/callback`;
    t = await startTestApp({ OAUTH_ACCESS_TOKEN_TTL_S: '2' });
    issuer = t.config.publicUrl;
    context = await browser.newContext();
    page = await context.newPage();

    // A person who is a member (not an owner) of the account: editor on one project, viewer on
    // another, nothing on a third.
    const tenant = await newAccountWithProjects(t, [{ name: 'Alpha' }, { name: 'Beta' }, { name: 'Gamma' }]);
    accountId = tenant.accountId;
    [chosen, offered, hidden] = tenant.projectIds;
    person = await newUser(t);
    await addAccountMember(t, accountId, person.id, 'member');
    await addProjectMember(t, accountId, chosen, person.id, 'editor');
    await addProjectMember(t, accountId, offered, person.id, 'viewer');
    provider = new BrowserFlowProvider(callbackUrl);
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await context?.close();
    await browser?.close();
    await callback?.close();
    await t?.close();
  });

  it('connecting with no token: the SDK discovers the server, registers, and asks to open the authorize URL', async () => {
    firstTransport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    await expect(new Client({ name: 'sdk-browser', version: '1.0.0' }).connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);

    // Discovery: the 401's resource metadata, then the authorization server's metadata.
    expect(provider.discovery?.authorizationServerUrl).toBe(issuer);
    expect(provider.discovery?.resourceMetadata).toMatchObject({ resource: `${issuer}/mcp`, authorization_servers: [issuer] });
    expect(provider.discovery?.authorizationServerMetadata).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
    });

    // Dynamic registration of a public client with the loopback redirect URI.
    expect(provider.client?.client_id).toEqual(expect.any(String));
    expect(provider.client).not.toHaveProperty('client_secret');
    const clients = await admin(t, 'get', '/admin/v1/oauth-clients?limit=200', undefined, 200);
    expect(clients.items.find((c: any) => c.id === provider.client!.client_id)).toMatchObject({
      client_name: CLIENT_NAME,
      redirect_uris: [callbackUrl],
      source: 'dcr',
    });

    // The authorization request: PKCE S256, state, resource and the scopes of the 401's challenge.
    expect(provider.authorizationUrls).toHaveLength(1);
    const url = provider.authorizationUrls[0];
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: provider.client!.client_id,
      redirect_uri: callbackUrl,
      code_challenge_method: 'S256',
      state: provider.stateValue,
      resource: `${issuer}/mcp`,
      scope: 'read write generate delete',
    });
  });

  it('in Chromium, the person signs in by pasting a login link, consents to one of two projects and two scopes, and the code reaches the loopback callback', async () => {
    const authorizeUrl = fromEarlierStep(provider.authorizationUrls[0], 'authorization URL');

    // Not signed in: the authorize URL shows the sign-in page (no consent form yet).
    await page.goto(authorizeUrl.href);
    const tokenField = page.locator('input[name="token"]');
    await tokenField.waitFor();
    expect(await page.locator('input[name="request_id"]').count()).toBe(0);
    await keepScreenshot(page, 'oauth-sign-in');

    // The person pastes the sign-in link an operator gave them (as `npm run login-link` or the
    // first start prints it: no return_to of its own) and signs in; the page brings them back to
    // the authorize request.
    const link = await admin(t, 'post', `/admin/v1/users/${person.id}/login-links`, {}, 201);
    await tokenField.fill(link.url);
    const landed = page.waitForResponse((r) => r.request().isNavigationRequest() && r.frame() === page.mainFrame() && (r.status() < 300 || r.status() >= 400));
    await page.getByRole('button', { name: 'Sign in' }).click();
    const consent: PageResponse = await landed;
    expect(consent.status()).toBe(200);

    // The consent page and its headers: form-action names the redirect's origin, since Chrome
    // applies form-action to the redirect that follows the POST.
    const headers = consent.headers();
    expect(formActionAllows(headers['content-security-policy'], callback.origin)).toBe(true);
    expect(headers['content-security-policy']).toContain(`default-src 'none'`);
    expect(headers['content-security-policy']).toContain(`frame-ancestors 'none'`);
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['referrer-policy']).toBe('no-referrer');
    const form = page.locator('form', { has: page.locator('input[name="request_id"]') });
    await form.waitFor({ state: 'attached' });
    expect(await form.count()).toBe(1);
    expect(await form.locator('input[name="csrf"]').count()).toBe(1);
    expect(await form.locator('[name="account_id"]').inputValue()).toBe(accountId);
    const text = await page.locator('body').innerText();
    expect(text).toContain(CLIENT_NAME);
    expect(text).toMatch(/unverified/i);
    expect(text).toContain(person.email);
    expect(await page.locator('strong, b').filter({ hasText: '127.0.0.1' }).count()).toBeGreaterThan(0);

    // The projects where the person has a role (not the third), each with a role capped at theirs.
    const projects = form.locator('input[type="checkbox"][name="project"]');
    expect((await projects.evaluateAll((els: any[]) => els.map((e) => e.value))).sort()).toEqual([chosen, offered].sort());
    const roles = async (projectId: string) => form.locator(`select[name="role_${projectId}"] option`).evaluateAll((els: any[]) => els.map((e) => e.value));
    expect(await roles(chosen)).toContain('editor');
    expect(await roles(chosen)).not.toContain('owner');
    expect(await roles(offered)).toEqual(['viewer']);
    expect(await form.locator(`input[name="project"][value="${hidden}"]`).count()).toBe(0);

    // The requested scopes, `delete` unchecked by default.
    const scopes = form.locator('input[type="checkbox"][name="scope"]');
    expect((await scopes.evaluateAll((els: any[]) => els.map((e) => e.value))).sort()).toEqual(['delete', 'generate', 'read', 'write']);
    expect(await form.locator('input[name="scope"][value="delete"]').isChecked()).toBe(false);

    // One project of two, as editor; read and write only.
    await form.locator(`input[name="project"][value="${chosen}"]`).check();
    await form.locator(`input[name="project"][value="${offered}"]`).uncheck();
    await form.locator(`select[name="role_${chosen}"]`).selectOption('editor');
    for (const scope of ['read', 'write']) await form.locator(`input[name="scope"][value="${scope}"]`).check();
    for (const scope of ['generate', 'delete']) await form.locator(`input[name="scope"][value="${scope}"]`).uncheck();
    await keepScreenshot(page, 'oauth-consent');

    // Approve: POST /oauth/consent answers 302 to the loopback redirect URI, which Chrome follows.
    await Promise.all([page.waitForURL((u) => u.origin === callback.origin), form.locator('[name="decision"][value="approve"]').click()]);
    const hit = await callback.next('/callback');
    expect(hit.searchParams.get('error')).toBeNull();
    expect(hit.searchParams.get('state')).toBe(provider.stateValue);
    expect(hit.searchParams.get('iss')).toBe(issuer);
    code = hit.searchParams.get('code')!;
    expect(code).toEqual(expect.any(String));
  }, 90_000);

  it('finishAuth exchanges the code; listTools and list_projects show exactly the consented project, role and scopes', async () => {
    await firstTransport.finishAuth(fromEarlierStep(code, 'authorization code'));
    expect(provider.savedTokens).toHaveLength(1);
    expect(provider.savedTokens[0]).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), expires_in: 2, scope: 'read write' });
    expect(provider.savedTokens[0].access_token).toMatch(/^rbg_/);
    expect(provider.savedTokens[0].refresh_token).toMatch(/^rbr_/);

    client = new Client({ name: 'sdk-browser', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
    const expectedTools = TOOL_NAMES.filter((name) => ['read', 'write'].includes(TOOL_TABLE[name].scope) && roleAtLeast('editor', TOOL_TABLE[name].role));
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([...expectedTools].sort());
    const listed = await client.callTool({ name: 'list_projects', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent).toEqual({ items: [{ id: chosen, name: 'Alpha', role: 'editor', article_count: 0 }] });

    // The same record as an operator's grant, with its person and client.
    const grants = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200);
    expect(grants.items.filter((g: any) => g.client_id === provider.client!.client_id)).toEqual([
      expect.objectContaining({
        source: 'oauth',
        user_id: person.id,
        client_id: provider.client!.client_id,
        client_name: CLIENT_NAME,
        scopes: ['read', 'write'],
        projects: [{ project_id: chosen, role: 'editor' }],
        expires_at: null,
        revoked_at: null,
      }),
    ]);
  }, 60_000);

  it('once the access token has expired (OAUTH_ACCESS_TOKEN_TTL_S=2), the SDK refreshes it by itself and the next call works', async () => {
    const connected = fromEarlierStep(client, 'connected client');
    const before = provider.savedTokens.length;
    const expired = fromEarlierStep(provider.tokens(), 'access token');
    // Past expiry: the token the SDK holds is refused with invalid_token.
    const refused = await eventually(
      () => rpc(t, expired.access_token, PING),
      (res) => res.status === 401,
      15_000,
      250,
    );
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');

    const listed = await connected.callTool({ name: 'list_projects', arguments: {} });
    expect(listed.structuredContent).toEqual({ items: [{ id: chosen, name: 'Alpha', role: 'editor', article_count: 0 }] });
    expect(provider.savedTokens.length).toBeGreaterThan(before);
    const refreshed = provider.tokens()!;
    expect(refreshed.access_token).toMatch(/^rbg_/);
    expect(refreshed.access_token).not.toBe(expired.access_token);
    // Rotated: a new refresh token, the grant's scopes kept.
    expect(refreshed.refresh_token).toMatch(/^rbr_/);
    expect(refreshed.refresh_token).not.toBe(expired.refresh_token);
    expect(refreshed.scope).toBe('read write');
    expect(provider.authorizationUrls).toHaveLength(1);
  }, 60_000);

  it('after POST /oauth/revoke the next call is 401 and the SDK asks the person to authorize again', async () => {
    const connected = fromEarlierStep(client, 'connected client');
    const held = fromEarlierStep(provider.tokens(), 'access token');
    // The revocation endpoint the SDK discovered (RFC 8414 metadata).
    const { revocation_endpoint } = provider.discovery!.authorizationServerMetadata as OAuthMetadata;
    const res = await fetch(revocation_endpoint!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: held.refresh_token!, token_type_hint: 'refresh_token', client_id: provider.client!.client_id }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});

    // The next call: 401, the refresh token refused too, so the SDK starts a new authorization.
    await expect(connected.callTool({ name: 'list_projects', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrls).toHaveLength(2);

    const raw = await rpc(t, held.access_token, PING);
    expect(raw.status).toBe(401);
    expect(raw.headers['www-authenticate']).toContain('error="invalid_token"');
    const refresh = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: held.refresh_token!, client_id: provider.client!.client_id }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });

    const grants = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200);
    expect(grants.items.find((g: any) => g.client_id === provider.client!.client_id)).toMatchObject({ revoked_at: expect.any(String), revoked_reason: 'user' });
  }, 60_000);
});
