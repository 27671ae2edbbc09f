import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { newAccountWithProjects, newKey } from '../support/fixtures.js';
import { callOk, rpc } from '../support/mcp-client.js';
import { addAccountMember, newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// Project settings in Debian's Chromium (docs/console.md#project-settings): an owner signs in by link, goes
// from the Overview to a project's Settings, turns a tool off (an API key's tools/list loses it),
// sets the writer up (version 1, which get_agent_config answers), changes one answer (version 2) and
// reads the versions newest first. Every page gets an axe pass (no serious or critical violation) and
// screenshots at 1280 and 360 px; the console's CSP must refuse nothing. Each `it` continues the last.

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describeWithChromium('console project settings in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: TestUser;
  let accountId: string;
  let projectId: string;
  let key: { key: string; id: string };
  const cspErrors: string[] = [];

  const check = (name: string) => screenshotAndCheck(page, `console-settings-${name}`);

  const toolNames = async () => ((await rpc(t, key.key, LIST)).body.result.tools as { name: string }[]).map((tool) => tool.name);

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
    projectId = tenant.projectIds[0];
    owner = await newUser(t, `owner-${Date.now()}@example.com`);
    await addAccountMember(t, accountId, owner.id, 'owner');
    key = await newKey(t, accountId, [{ project_id: projectId, role: 'owner' }], ['read', 'write', 'generate', 'delete'], 'Claude Code');
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  it("the owner signs in by link and goes from the Overview to a project's settings", async () => {
    await signInOnPage(page, t, owner.id, accountId);
    await page.getByRole('link', { name: 'Settings of Cooking blog' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/projects/${projectId}/settings`);
    expect(await page.locator('h1').textContent()).toBe('Settings of Cooking blog');
    expect(await page.getByRole('checkbox', { name: 'delete_article' }).isChecked()).toBe(true);
    expect(await page.locator('main').textContent()).toContain('The writer is not set up yet');
    await check('unset');
  });

  it('turns delete_article off: the notice shows, and the key no longer lists it', async () => {
    expect(await toolNames()).toContain('delete_article');
    await page.getByRole('checkbox', { name: 'delete_article' }).uncheck();
    await page.getByRole('button', { name: 'Save tools' }).click();
    await page.waitForURL('**/settings?done=tools');
    expect(await page.getByRole('status').textContent()).toContain('Tools saved');
    expect(await page.getByRole('checkbox', { name: 'delete_article' }).isChecked()).toBe(false);
    expect(await toolNames()).not.toContain('delete_article');
    expect(await toolNames()).toContain('list_articles');
  });

  it('sets the writer up (version 1, read back by get_agent_config), then changes the tone (version 2)', async () => {
    await page.getByLabel('Who reads this blog?').fill('Home cooks who bake on weekends');
    await page.getByLabel('Which topics should the blog cover (comma-separated)?').fill('bread, pastry');
    await page.getByLabel('How long should a typical article be?').selectOption('medium');
    await page.getByRole('button', { name: 'Save as version 1' }).click();
    await page.waitForURL('**/settings?done=writer');
    const v1 = await callOk(t, key.key, 'get_agent_config', {});
    expect(v1.config).toMatchObject({
      version: 1,
      answers: { audience: 'Home cooks who bake on weekends', topics: 'bread, pastry', length: 'medium', language: 'en' },
    });

    await page.getByLabel(/What tone should the articles have/).fill('Playful and warm');
    await page.getByRole('button', { name: 'Save as version 2' }).click();
    await page.waitForURL('**/settings?done=writer');
    expect((await callOk(t, key.key, 'get_agent_config', {})).config).toMatchObject({ version: 2, answers: { tone: 'Playful and warm' } });
    expect(await page.locator('main').textContent()).toContain('Current: version 2');
    expect(await page.locator('ol.versions summary strong').allTextContents()).toEqual(['Version 2', 'Version 1']);
    expect(await page.locator('ol.versions summary').first().textContent()).toContain('changed tone');
    // Times are shown in the browser's zone by the script.
    expect(await page.locator('summary time').first().textContent()).not.toMatch(/UTC$/);
    const first = page.locator('ol.versions details').nth(1);
    expect(await first.getByText('Home cooks who bake on weekends').isVisible()).toBe(false);
    await first.locator('summary').click();
    expect(await first.getByText('Home cooks who bake on weekends').isVisible()).toBe(true);
    await check('versions');
  });

  it('a refused answer comes back with a sentence, what was typed, and no new version; the CSP refused nothing', async () => {
    // The field's maxlength stops a person typing more; a page edited by hand (or an old one) is refused by the server.
    await page.locator('#writer-tone').evaluate((el) => (el as unknown as { removeAttribute(name: string): void }).removeAttribute('maxlength'));
    await page.getByLabel(/What tone should the articles have/).fill('x'.repeat(201));
    await page.getByRole('button', { name: 'Save as version 3' }).click();
    await page.waitForSelector('[role=alert]');
    expect(await page.getByRole('alert').textContent()).toContain('longer than 200 characters');
    expect((await callOk(t, key.key, 'get_agent_config', {})).config.version).toBe(2);
    await check('refused');
    expect(cspErrors).toEqual([]);
  });
});
