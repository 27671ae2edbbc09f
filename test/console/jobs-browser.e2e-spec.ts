import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { createDatabase, eventually, jobRow, type TestDatabase } from '../support/database.js';
import { configuredTenant, type Tenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import { addAccountMember, addProjectMember, newUser, type TestUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

// The Jobs page in Debian's Chromium (docs/console.md#jobs): an owner sees the article and the image jobs
// made (the image's thumbnail loads under the console's CSP), one running and one queued, cancels both
// with the button (the tools see them cancelled); a member viewer sees the jobs but no Cancel. Every
// page gets an axe pass (no serious or critical violation) and screenshots at 1280 and 360 px.

describeWithChromium('console jobs in Chromium', () => {
  let db: TestDatabase;
  let api: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: TestUser;
  let viewer: TestUser;
  let tenant: Tenant;
  let running: string;
  let queued: string;
  const cspErrors: string[] = [];

  const check = (name: string) => screenshotAndCheck(page, `console-${name}`);

  const signIn = (user: TestUser) => signInOnPage(page, api, user.id, tenant.accountId);

  beforeAll(async () => {
    browser = await launchChromium();
    db = await createDatabase();
    api = await db.app({ ROLE: 'api', SYNC_BUDGET_MS: '0' });
    tenant = await configuredTenant(api, { projects: 1 });
    owner = await newUser(api, `owner-${Date.now()}@example.com`);
    viewer = await newUser(api, `viewer-${Date.now()}@example.com`);
    await addAccountMember(api, tenant.accountId, owner.id, 'owner');
    await addAccountMember(api, tenant.accountId, viewer.id, 'member');
    await addProjectMember(api, tenant.accountId, tenant.projectIds[0], viewer.id, 'viewer');

    // An article and its image, by a quick worker; then one job running on a slow one, one queued.
    const quick = await db.app({ ROLE: 'worker', LOCAL_PROVIDER_DELAY_MS: '0' });
    const wrote = await callOk(api, tenant.key, 'write_article', { brief: 'Sourdough', title: 'Sourdough basics' });
    const done = await eventually(
      () => callOk(api, tenant.key, 'get_job', { job_id: wrote.job_id }),
      (j) => j.status === 'succeeded',
    );
    const drew = await callOk(api, tenant.key, 'generate_image', { prompt: 'a golden crust', article_id: done.result.article.id, aspect_ratio: '4:3' });
    await eventually(
      () => callOk(api, tenant.key, 'get_job', { job_id: drew.job_id }),
      (j) => j.status === 'succeeded',
    );
    await quick.close();
    running = (await callOk(api, tenant.key, 'write_article', { brief: 'A long read' })).job_id;
    await db.app({ ROLE: 'worker', LOCAL_PROVIDER_DELAY_MS: '60000', JOBS_MAX_RUNNING_PER_ACCOUNT: '1', SHUTDOWN_GRACE_MS: '0' });
    await eventually(
      () => jobRow(db.url, running),
      (j) => j.status === 'running' && j.progress > 0,
    );
    queued = (await callOk(api, tenant.key, 'generate_image', { prompt: 'a loaf on a table', aspect_ratio: '1:1' })).job_id;
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
    await db?.drop();
  });

  it('the owner sees the jobs with what they made, cancels the running and the queued one', async () => {
    await signIn(owner);
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.waitForURL(`**/console/accounts/${tenant.accountId}/jobs`);
    const text = await page.locator('main').textContent();
    expect(text).toContain('Article “Sourdough basics”');
    expect(text).toContain('1,024 × 768');
    // The thumbnail loaded (same origin, under the session).
    const loaded = await page.locator('main img').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    expect(loaded).toBeGreaterThan(0);
    expect(await page.locator('td time').first().textContent()).not.toMatch(/UTC$/);
    expect(await page.getByRole('button', { name: /^Cancel job/ }).count()).toBe(2);
    await check('jobs');

    await page.getByRole('button', { name: `Cancel job ${running}` }).click();
    await page.waitForURL('**/jobs?done=cancelled');
    expect(await page.getByRole('status').textContent()).toContain('The job is cancelled');
    await page.getByRole('button', { name: `Cancel job ${queued}` }).click();
    await page.waitForURL('**/jobs?done=cancelled');
    expect(await page.getByRole('button', { name: /^Cancel job/ }).count()).toBe(0);
    for (const id of [running, queued]) expect(await callOk(api, tenant.key, 'get_job', { job_id: id })).toMatchObject({ status: 'cancelled' });
    await check('jobs-cancelled');
  });

  it('a viewer sees the jobs of their project and no Cancel; the CSP refused nothing', async () => {
    const later = (await callOk(api, tenant.key, 'write_article', { brief: 'Another' })).job_id;
    await signIn(viewer);
    await page.getByRole('link', { name: 'Jobs' }).click();
    const text = await page.locator('main').textContent();
    expect(await page.locator(`code[title="${later}"]`).count()).toBe(1);
    expect(text).toContain(`…${later.slice(-8)}`);
    expect(text).toContain('Sourdough basics');
    expect(await page.getByRole('button', { name: /^Cancel job/ }).count()).toBe(0);
    await check('jobs-viewer');
    expect(cspErrors).toEqual([]);
  });
});
