import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { callTool } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The Members pages in Debian's Chromium (docs/console.md#members): an owner signs in by link, adds a person
// by email with a project role, changes a member's roles (their OAuth grant loses a project at its
// next request), makes a sign-in link (shown once, never in the URL) that signs the new person in
// from another browser, and is refused removing the last owner with the sentence on the page. Every
// page gets an axe pass (no serious or critical violation) and screenshots at 1280 and 360 px.

describeWithChromium('console members in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: TestUser;
  let member: TestUser;
  let accountId: string;
  let projectIds: string[];
  let grant: { token: string; id: string };
  const newEmail = `grace-${Date.now()}@example.com`;
  const cspErrors: string[] = [];

  const check = (name: string, on: Page = page) => screenshotAndCheck(on, `console-${name}`);

  const projectsOf = async (token: string) => {
    const out = await callTool(t, token, 'list_projects');
    return (out.json.items as { id: string; role: string }[]).map((p) => p.id).sort();
  };

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestApp();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Europe/Paris', locale: 'en-GB' });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    ({ accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Cooking blog' }, { name: 'Travel notes' }]));
    owner = await newUser(t, `owner-${Date.now()}@example.com`);
    member = await newUser(t, `ada-${Date.now()}@example.com`);
    await addAccountMember(t, accountId, owner.id, 'owner');
    await addAccountMember(t, accountId, member.id, 'member');
    await addProjectMember(t, accountId, projectIds[0], member.id, 'editor');
    await addProjectMember(t, accountId, projectIds[1], member.id, 'editor');
    // Only `owner` owns the account (its creation made owner_email an owner too).
    for (const m of (await admin(t, 'get', `/admin/v1/accounts/${accountId}/members`)).items) {
      if (m.user_id !== owner.id && m.user_id !== member.id) await admin(t, 'delete', `/admin/v1/accounts/${accountId}/members/${m.user_id}`, undefined, 204);
    }
    const client = await newClient(t, { client_name: 'Cursor' });
    grant = await oauthGrant(t, {
      accountId,
      userId: member.id,
      clientId: client.client_id,
      clientName: 'Cursor',
      projects: projectIds.map((project_id) => ({ project_id, role: 'editor' as const })),
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  it('the owner signs in by link and opens Members: people with their account and project roles', async () => {
    await signInOnPage(page, t, owner.id, accountId);
    await page.getByRole('link', { name: 'Members' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/members`);
    const text = await page.locator('main').textContent();
    expect(text).toContain(owner.email);
    expect(text).toContain(member.email);
    expect(text).toContain('owner of every project');
    await check('members');
  });

  it('adds a person by email as a member with one project role', async () => {
    await page.getByLabel('Email').fill(newEmail);
    await page.locator('#add-role').selectOption('member');
    await page.getByLabel('Travel notes').first().selectOption('viewer');
    await page.getByRole('button', { name: 'Add person' }).click();
    await page.waitForURL(`**/members?done=added`);
    expect(await page.getByRole('status').textContent()).toContain('The person is added');
    const row = page.locator('tr', { hasText: newEmail });
    expect(await row.textContent()).toContain('Travel notes');
    expect(await row.textContent()).not.toContain('Cooking blog');
    await check('members-added');
  });

  it("changes a member's roles: their OAuth grant loses the project at its next request", async () => {
    expect(await projectsOf(grant.token)).toEqual([...projectIds].sort());
    await page.getByRole('link', { name: member.email }).click();
    await page.waitForURL(`**/members/${member.id}`);
    expect(await page.locator('h1').textContent()).toBe(member.email);
    await check('member');
    await page.locator(`#change-project-${projectIds[1]}`).selectOption('');
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page.waitForURL(`**/members?done=changed`);
    expect(await projectsOf(grant.token)).toEqual([projectIds[0]]);
  });

  it('makes a sign-in link, shown once and never in the URL, that signs the new person in elsewhere', async () => {
    await page.getByRole('link', { name: newEmail }).click();
    await page.getByRole('button', { name: 'Make a sign-in link' }).click();
    await page.waitForSelector('#sign-in-link');
    const url = (await page.locator('#sign-in-link').textContent())!.trim();
    expect(url).toMatch(/\/oauth\/login\?token=rbl_/);
    expect(page.url()).toMatch(/\/sign-in-link$/);
    expect(page.url()).not.toContain('rbl_');
    await expect(page.getByRole('button', { name: 'Copy link' }).isVisible()).resolves.toBe(true);
    await check('sign-in-link');
    await page.getByRole('link', { name: 'Done' }).click();
    expect(await page.locator('main').textContent()).not.toContain('rbl_');

    // The new person, in a browser of their own: into this account, where they see Travel notes only.
    const theirs = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const them = await theirs.newPage();
      await them.goto(url);
      // The page says whose sign-in it is, and who made it.
      expect(await them.locator('main').textContent()).toContain(`This link signs in ${newEmail}. It was made by ${owner.email}`);
      await them.getByRole('button', { name: `Sign in as ${newEmail}` }).click();
      await them.waitForURL(`**/console/accounts/${accountId}`);
      const overview = await them.locator('main').textContent();
      expect(overview).toContain('Travel notes');
      expect(overview).not.toContain('Cooking blog');
      expect(await them.getByRole('link', { name: 'Members' }).count()).toBe(0);
    } finally {
      await theirs.close();
    }
  });

  it('offers no sign-in link for a person who owns another account, and says why in its place: an owner cannot take over theirs', async () => {
    // Bob owns account B. The owner adds him to this account, then asks for his link.
    const other = await newAccountWithProjects(t, [{ name: 'Bob blog' }]);
    const bob = await newUser(t, `bob-${Date.now()}@b.test`);
    await addAccountMember(t, other.accountId, bob.id, 'owner');
    await page.goto(`${t.baseUrl}/console/accounts/${accountId}/members`);
    await page.getByLabel('Email').fill(bob.email);
    await page.locator('#add-role').selectOption('member');
    await page.getByRole('button', { name: 'Add person' }).click();
    await page.waitForURL(`**/members?done=added`);
    await page.getByRole('link', { name: bob.email }).click();
    await page.getByRole('heading', { name: 'Sign-in link' }).waitFor();
    expect(await page.getByRole('button', { name: 'Make a sign-in link' }).count()).toBe(0);
    expect(await page.getByText(`${bob.email} belongs to other accounts: they sign in themselves, or ask your operator.`).count()).toBe(1);
    expect(await page.locator('#sign-in-link').count()).toBe(0);
    expect(await page.content()).not.toContain('rbl_');
    await check('sign-in-link-refused');
    await admin(t, 'delete', `/admin/v1/accounts/${accountId}/members/${bob.id}`, undefined, 204);
  });

  it("refuses removing the last owner with the service's sentence; removes a member", async () => {
    await page.goto(`${t.baseUrl}/console/accounts/${accountId}/members/${owner.id}`);
    await page.getByRole('button', { name: 'Remove from account' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('is the last owner of account');
    await check('member-last-owner');

    await page.goto(`${t.baseUrl}/console/accounts/${accountId}/members/${member.id}`);
    await page.getByRole('button', { name: 'Remove from account' }).click();
    await page.waitForURL(`**/members?done=removed`);
    expect(await page.locator('main').textContent()).not.toContain(member.email);
    expect(await projectsOf(grant.token)).toEqual([]);
    expect(cspErrors).toEqual([]);
  });
});
