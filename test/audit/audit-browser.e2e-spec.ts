import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { admin, newAccount, newProject } from '../support/fixtures.js';
import { addAccountMember, newUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The Audit page in Debian's Chromium (docs/console.md#audit): an owner opens it from the nav, sees
// the account's acts, filters them with the keyboard alone; the console's CSP refuses nothing; an
// axe pass and screenshots at 1280 and 360 px (no sideways scrolling of the page at 360).

describeWithChromium('console audit in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let accountId: string;
  let owner: { user_id: string; email: string };
  const cspErrors: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestApp();
    accountId = (await newAccount(t)).id;
    await newProject(t, accountId, 'Blog');
    owner = (await admin(t, 'get', `/admin/v1/accounts/${accountId}/members`)).items[0];
    const person = await newUser(t);
    await addAccountMember(t, accountId, person.id, 'member');
  }, 120_000);

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Europe/Paris', locale: 'en-GB' });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
  });
  afterEach(() => context?.close());
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('an owner opens Audit from the nav, reads the acts, filters them with the keyboard', async () => {
    await signInOnPage(page, t, owner.user_id, accountId);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/audit`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Audit');
    const actions = () => page.locator('table.log tbody tr td:nth-child(3)').allTextContents();
    // Signing in made a sign-in link (the operator's, in no account): not in this account's trail.
    expect(await actions()).toEqual(['account_member.put', 'project.created', 'account.created']);
    await screenshotAndCheck(page, 'console-audit');
    await page.setViewportSize({ width: 360, height: 740 });
    expect(
      await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth),
    ).toBeLessThanOrEqual(360);
    await page.setViewportSize({ width: 1280, height: 800 });

    // The keyboard alone: focus the action filter, choose with the arrows, submit with Enter.
    await page.getByLabel('Action').focus();
    await page.getByLabel('Action').selectOption('project.created');
    await page.getByLabel('Who (email, user id or operator)').focus();
    await page.keyboard.type('operator');
    await page.keyboard.press('Enter');
    await page.waitForURL(/action=project\.created/);
    expect(await actions()).toEqual(['project.created']);
    await expect(page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')).resolves.toContain('/audit/export?actor=operator&action=project.created');
    expect(cspErrors).toEqual([]);
  });
});
