import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { admin, newAccount, newProject } from '../support/fixtures.js';
import { addAccountMember, newUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The Audit page in Debian's Chromium (docs/console.md#audit): an owner opens it from the nav, sees
// the account's acts, filters them with the keyboard alone; the console's CSP refuses nothing; an
// axe pass and screenshots at 1280 and 360 px (nothing scrolls sideways at 360: targets and changes
// read as key: value lines that wrap).

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
    const actions = () => page.locator('table.audit tbody tr td[data-label=Action]').allTextContents();
    // Signing in made a sign-in link (the operator's, in no account): not in this account's trail.
    expect(await actions()).toEqual(['account_member.put', 'project.created', 'account.created']);
    // The target reads as key: value, not JSON.
    const created = page.locator('table.audit tbody tr').filter({ hasText: 'project.created' });
    expect((await created.locator('td[data-label=Target]').innerText()).trim()).toMatch(/^project_id: [0-9a-f-]{36}$/);
    await screenshotAndCheck(page, 'console-audit');
    await page.setViewportSize({ width: 360, height: 740 });
    // Nothing scrolls sideways at 360 px: neither the page nor any box in it.
    const sideways = await page.evaluate(() => {
      type Box = { scrollWidth: number; clientWidth: number; tagName: string; className: string };
      const inPage = globalThis as unknown as {
        document: { documentElement: Box; querySelectorAll(s: string): ArrayLike<Box> };
        getComputedStyle(b: Box): { overflowX: string };
      };
      const doc = inPage.document;
      // A box the reader can scroll sideways: it overflows and lets them scroll.
      const scrolling = Array.from(doc.querySelectorAll('body *'))
        .filter((b) => ['auto', 'scroll'].includes(inPage.getComputedStyle(b).overflowX) && b.scrollWidth > b.clientWidth + 1)
        .map((b) => `${b.tagName}.${b.className}`);
      return { page: doc.documentElement.scrollWidth <= doc.documentElement.clientWidth, scrolling };
    });
    expect(sideways).toEqual({ page: true, scrolling: [] });
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
