import type { Browser, BrowserContext, Page } from 'playwright-core';
import { freePort } from '../../src/common/net.js';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { startInstances, type TestDatabase } from '../support/database.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { addAccountMember, newUser, type TestUser } from '../support/people.js';
import { TestIdp } from '../support/test-idp.js';
import type { TestApp } from '../support/test-app.js';

// The Identity provider page in Debian's Chromium (docs/console.md#identity-provider): an owner
// signs in by link, opens the page from the navigation, registers the company's provider with sign-in
// set up, sees a discovery failure as one sentence with the form kept, and copies the values for the
// provider. Each step gets an axe pass (no serious or critical violation) and screenshots at 1280 and
// 360 px; the console's CSP must refuse nothing. Each `it` continues the last.

describeWithChromium('console Identity provider page in Chromium', () => {
  let db: TestDatabase;
  let t: TestApp;
  let idp: TestIdp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: TestUser;
  let accountId: string;
  const cspErrors: string[] = [];

  const check = (name: string) => screenshotAndCheck(page, `console-identity-provider-${name}`);

  beforeAll(async () => {
    browser = await launchChromium();
    idp = await TestIdp.start();
    // A database of its own: the provider registered here turns the work-email field on for every sign-in page of it.
    ({
      db,
      apps: [t],
    } = await startInstances({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' }));
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Europe/Paris', locale: 'en-GB' });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    ({ accountId } = await newAccountWithProjects(t, [{ name: 'Cooking blog' }]));
    owner = await newUser(t, `owner-${Date.now()}@example.com`);
    await addAccountMember(t, accountId, owner.id, 'owner');
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await db?.drop();
    await idp?.close();
  });

  it('the owner opens the page from the navigation: nothing registered yet, the values to copy', async () => {
    await signInOnPage(page, t, owner.id, accountId);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Identity provider' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/identity-provider`);
    expect(await page.locator('h1').textContent()).toBe('Identity provider');
    expect(await page.locator('#copy-redirect').textContent()).toBe(`${t.config.publicUrl}/oauth/callback/oidc`);
    // The copy buttons appear once the console's script runs.
    expect(await page.locator('button[data-copy="copy-redirect"]').isVisible()).toBe(true);
    await check('empty');
  });

  it('a discovery that fails: the sentence, the form as typed', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await page.getByLabel('Issuer', { exact: true }).fill(closed);
    await page.getByLabel('Client ID', { exact: true }).fill('reblog');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForSelector('[role=alert]');
    expect(await page.getByRole('alert').textContent()).toContain(`The discovery document of ${closed} could not be fetched`);
    expect(await page.getByLabel('Issuer', { exact: true }).inputValue()).toBe(closed);
    expect(await page.getByLabel('Client ID', { exact: true }).inputValue()).toBe('reblog');
    await check('refused');
  });

  it('registers the provider with sign-in set up; the secret is not shown back', async () => {
    await page.getByLabel('Issuer', { exact: true }).fill(idp.issuer);
    await page.getByLabel('Name people by').selectOption('sub');
    await page.getByLabel('People it signs in who are not members of this account').selectOption('add');
    await page.getByLabel('Client ID', { exact: true }).fill('reblog-okta-app');
    await page.getByLabel('Client secret', { exact: true }).fill('very-secret');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL('**/identity-provider?done=created');
    expect(await page.getByRole('status').textContent()).toContain('The identity provider is registered.');
    const main = (await page.locator('main').textContent())!;
    expect(main).toContain('client ID reblog-okta-app, with a secret');
    expect(main).not.toContain('very-secret');
    const [saved] = (await admin(t, 'get', `/admin/v1/accounts/${accountId}/identity-providers`)).items;
    expect(saved).toMatchObject({
      issuer: idp.issuer,
      person_claim: 'sub',
      unknown_people: 'add',
      oidc_client_id: 'reblog-okta-app',
      oidc_client_secret_set: true,
    });
    await check('registered');
    expect(cspErrors).toEqual([]);
  });

  it('signed out, the sign-in page now offers "Sign in with your company" with a labelled work-email field', async () => {
    const visitor = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const signIn = await visitor.newPage();
      await signIn.goto(`${t.baseUrl}/oauth/login`);
      expect(await signIn.getByRole('heading', { name: 'Sign in with your company' }).isVisible()).toBe(true);
      expect(await signIn.getByLabel('Work email').getAttribute('type')).toBe('email');
      await screenshotAndCheck(signIn, 'sign-in-with-company');
    } finally {
      await visitor.close();
    }
  });
});
