import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The owners' console in Debian's Chromium (docs/console.md): an owner signs in by link,
// lands in their account, makes an API key (secret shown once, works on /mcp), revokes it (401),
// finds an OAuth-connected app under Connected apps and disconnects it (401). Every page gets an axe
// pass (no serious or critical violation) and screenshots at 1280 and 360 px wide; the console's CSP
// must not refuse anything the pages load. The steps run in order; each `it` continues the last.

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describeWithChromium('owners console in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: TestUser;
  let accountId: string;
  let grant: { token: string; id: string };
  let secret: string;
  const cspErrors: string[] = [];

  const check = (name: string) => screenshotAndCheck(page, `console-${name}`);

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestApp();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Europe/Paris', locale: 'en-GB' });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    const tenant = await newAccountWithProjects(t, [{ name: 'Cooking blog' }, { name: 'Travel notes' }]);
    accountId = tenant.accountId;
    owner = await newUser(t, `owner-${Date.now()}@example.com`);
    await addAccountMember(t, accountId, owner.id, 'owner');
    const client = await newClient(t, { client_name: 'Claude Desktop', redirect_uris: ['https://claude.ai/api/mcp/auth_callback'] });
    grant = await oauthGrant(t, {
      accountId,
      userId: owner.id,
      clientId: client.client_id,
      clientName: 'Claude Desktop',
      projects: [{ project_id: tenant.projectIds[0], role: 'editor' }],
      scopes: ['read', 'write'],
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  it('the owner follows a sign-in link and lands in their only account: the overview', async () => {
    expect((await rpc(t, grant.token, PING)).status).toBe(200);
    await signInOnPage(page, t, owner.id, accountId);
    expect(await page.locator('h1').textContent()).toBe('Overview');
    expect(await page.locator('main').textContent()).toContain('Cooking blog');
    await check('overview');
  });

  it('creates an API key: the secret shown once with the claude mcp add line, never in the URL; it works on /mcp', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/keys`);
    await check('keys-empty');
    await page.getByLabel('Name').fill('Claude Code on my laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#new-secret');
    secret = (await page.locator('#new-secret').textContent())!.trim();
    expect(secret).toMatch(/^rbk_/);
    expect(page.url()).not.toContain(secret);
    expect(page.url()).toMatch(/\/keys$/);
    expect((await page.locator('#claude-command').textContent())!.trim()).toBe(
      `claude mcp add --transport http reblog ${t.config.publicUrl}/mcp --header "Authorization: Bearer ${secret}"`,
    );
    // The console's script ran (allowed by its CSP): it shows the copy buttons.
    await expect(page.getByRole('button', { name: 'Copy secret' }).isVisible()).resolves.toBe(true);
    await check('key-created');
    expect((await rpc(t, secret, PING)).status).toBe(200);

    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/keys`);
    const listed = await page.locator('main').textContent();
    expect(listed).toContain('Claude Code on my laptop');
    expect(listed).toContain(secret.slice(0, 12));
    expect(listed).not.toContain(secret);
    // Times are shown in the browser's zone by the script, not the server's UTC text.
    expect(await page.locator('td time').first().textContent()).not.toMatch(/UTC$/);
    await check('keys');
  });

  it('revokes the key: the next /mcp call is 401', async () => {
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/keys?done=revoked`);
    expect(await page.getByRole('status').textContent()).toContain('revoked');
    expect((await rpc(t, secret, PING)).status).toBe(401);
  });

  it('finds the OAuth-connected app under Connected apps and disconnects it: its token is 401', async () => {
    await page.getByRole('link', { name: 'Connected apps' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/apps`);
    const text = await page.locator('main').textContent();
    expect(text).toContain('Claude Desktop');
    expect(text).toContain('claude.ai');
    expect(text).toContain('Cooking blog');
    await check('apps');
    await page.getByRole('button', { name: 'Disconnect' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/apps?done=disconnected`);
    expect((await rpc(t, grant.token, PING)).status).toBe(401);
    const grants = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants`);
    expect(grants.items.find((g: { id: string }) => g.id === grant.id)).toMatchObject({ revoked_reason: 'user' });
    await check('apps-disconnected');
  });

  it('with a second account, /console/ lists both; an unknown account is the 404 page; the CSP refused nothing', async () => {
    const second = await newAccountWithProjects(t, [{ name: 'Side project' }]);
    await addAccountMember(t, second.accountId, owner.id, 'member');
    await page.goto(`${t.baseUrl}/console/`);
    expect(await page.locator('h1').textContent()).toBe('Your accounts');
    await check('accounts');
    const res = await page.goto(`${t.baseUrl}/console/accounts/00000000-0000-7000-8000-000000000000`);
    expect(res?.status()).toBe(404);
    await check('not-found');
    expect(cspErrors).toEqual([]);
  });
});
