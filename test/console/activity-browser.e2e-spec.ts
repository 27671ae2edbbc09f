import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshotAndCheck } from '../support/browser.js';
import { signInOnPage } from '../support/console.js';
import { newAccountWithProjects, newKey } from '../support/fixtures.js';
import { call, callOk, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The console's Activity page in Debian's Chromium (docs/console.md#activity): requests made on /mcp
// with an API key and an OAuth grant show up with the client's name; a filter narrows them; the chart
// has bars; the CSV download has the same rows as the filtered list; an entry opens; a member sees
// only their own. Every page gets an axe pass (no serious or critical violation) and screenshots at
// 1280 and 360 px; the console's CSP refuses nothing. The steps run in order.

const ENTRY_HREF = /\/activity\/([0-9a-f-]{36})$/;
const MINUTE = 60_000;

/** A moment as a `datetime-local` field in New York shows it (to the minute). */
function newYork(at: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'America/New_York',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}`;
}

/** The moment to the minute, rounded down (what a field typed to the minute stands for). */
const toMinute = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE);

describeWithChromium('console activity in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: TestUser;
  let member: TestUser;
  let accountId: string;
  const cspErrors: string[] = [];

  const check = (name: string) => screenshotAndCheck(page, `console-${name}`);

  /** The entry ids of the log on the page, in order. */
  async function rows(): Promise<string[]> {
    const hrefs = await page.locator('table.log tbody tr td:first-child a').evaluateAll((links) => links.map((a) => (a as unknown as { href: string }).href));
    return hrefs.map((h) => ENTRY_HREF.exec(h)![1]);
  }

  /** A session as `client`, then a call of `tool` in it. */
  async function useAs(token: string, client: string, tool: string, args: Record<string, unknown> = {}): Promise<void> {
    const { sessionId } = await initSession(t, token, '2025-06-18', { name: client, version: '1.4.0' });
    expect((await rpc(t, token, call(2, tool, args), sessionHeaders(sessionId))).status).toBe(200);
  }

  const signIn = (user: TestUser) => signInOnPage(page, t, user.id, accountId);

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestApp();
    const tenant = await newAccountWithProjects(t, [{ name: 'Cooking blog' }, { name: 'Travel notes' }]);
    accountId = tenant.accountId;
    owner = await newUser(t, `owner-${Date.now()}@example.com`);
    member = await newUser(t, `member-${Date.now()}@example.com`);
    await addAccountMember(t, accountId, owner.id, 'owner');
    await addAccountMember(t, accountId, member.id, 'member');
    await addProjectMember(t, accountId, tenant.projectIds[0], member.id, 'editor');
    const client = await newClient(t, { client_name: 'Claude Desktop', redirect_uris: ['https://claude.ai/api/mcp/auth_callback'] });
    const grant = await oauthGrant(t, {
      accountId,
      userId: owner.id,
      clientId: client.client_id,
      clientName: 'Claude Desktop',
      projects: [{ project_id: tenant.projectIds[0], role: 'editor' }],
    });
    const cursor = await newClient(t, { client_name: 'Cursor' });
    const memberGrant = await oauthGrant(t, {
      accountId,
      userId: member.id,
      clientId: cursor.client_id,
      clientName: 'Cursor',
      projects: [{ project_id: tenant.projectIds[0], role: 'editor' }],
    });
    const key = await newKey(
      t,
      accountId,
      [
        { project_id: tenant.projectIds[0], role: 'viewer' },
        { project_id: tenant.projectIds[1], role: 'editor' },
      ],
      undefined,
      'CI key',
    );

    await useAs(grant.token, 'Claude Desktop', 'list_projects');
    await useAs(grant.token, 'Claude Desktop', 'list_articles', { project_id: tenant.projectIds[0] });
    await useAs(key.key, 'ci-runner', 'list_projects');
    // A viewer on Cooking: create_article there is refused (denied).
    await useAs(key.key, 'ci-runner', 'create_article', { project_id: tenant.projectIds[0], title: 'No', body_markdown: 'x' });
    // An unknown tool: a JSON-RPC error, whose message the log keeps (outcome invalid).
    await useAs(key.key, 'ci-runner', 'no_such_tool');
    // Without a session (no client name).
    await callOk(t, key.key, 'list_projects');
    await useAs(memberGrant.token, 'Cursor', 'list_projects');

    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Europe/Paris', locale: 'en-GB', acceptDownloads: true });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  it("the owner opens Activity: the key's and the app's requests with their clients' names, and a chart with bars", async () => {
    await signIn(owner);
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/activity`);
    expect(await page.locator('h1').textContent()).toBe('Activity');
    // 6 initialize + 6 tool calls in sessions + 1 call without a session.
    expect(await rows()).toHaveLength(13);
    const log = (await page.locator('table.log').textContent())!;
    for (const text of ['Claude Desktop', 'ci-runner', 'Cursor', 'CI key (API key)', 'Claude Desktop (app)', 'create_article', 'Denied', 'Cooking blog'])
      expect(log).toContain(text);
    // The chart: stacked bars (this hour's ok and denied at least), each with a title.
    const bars = page.locator('svg.chart rect.bar');
    expect(await bars.count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('svg.chart rect.bar.o-denied').count()).toBe(1);
    expect(await page.locator('svg.chart rect.bar.o-ok title').first().textContent()).toMatch(/^\d+ OK · /);
    // The script showed the times in the browser's zone (Paris), not the server's UTC text.
    expect(await page.locator('table.log time').first().textContent()).not.toMatch(/UTC$/);
    const label = page.locator('svg.chart text.x-label').first();
    const utc = (await label.getAttribute('data-at'))!.slice(11, 16);
    expect(await label.textContent()).not.toBe(utc);
    await check('activity');
  });

  it('a filter narrows the log; the CSV download has the same rows', async () => {
    await page.getByLabel('Client name', { exact: true }).fill('Claude Desktop');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/client=Claude\+Desktop/);
    const shown = await rows();
    expect(shown).toHaveLength(4);
    const clients = await page.locator('table.log tbody tr td:nth-child(2)').allTextContents();
    expect(new Set(clients)).toEqual(new Set(['Claude Desktop']));

    await page.getByLabel('Outcome', { exact: true }).selectOption('ok');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/outcome=ok/);
    expect(await rows()).toHaveLength(4);
    await page.getByLabel('Outcome', { exact: true }).selectOption('denied');
    await page.getByLabel('Client name', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/outcome=denied/);
    const denied = await rows();
    expect(denied).toHaveLength(1);
    await check('activity-filtered');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^reblog-activity-\d{8}-\d{4}\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n');
    expect(csv[0].split(',').slice(0, 4)).toEqual(['id', 'at', 'credential_type', 'credential_id']);
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(denied);
    expect(csv[1]).toContain(',denied,');

    // Back to every client's rows: the CSV of the whole log has every row of the list too.
    await page.getByRole('link', { name: 'Clear' }).click();
    const all = await rows();
    const [everything] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(
      readFileSync((await everything.path())!, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual(all);
  });

  it('opens an entry: its error, session and client; the 7-day chart by day; a bad filter is the page with a sentence (400)', async () => {
    await page.goto(`${t.baseUrl}/console/accounts/${accountId}/activity?outcome=invalid`);
    await page.locator('table.log tbody tr td:first-child a').first().click();
    await page.waitForURL(ENTRY_HREF);
    const details = (await page.locator('dl.details').textContent())!;
    expect(details).toContain('ci-runner 1.4.0');
    expect(details).toContain('Unknown tool: no_such_tool');
    expect(details).toContain('-32602');
    expect(details).not.toContain('none (a request outside a session)');
    await check('activity-entry');

    await page.getByRole('link', { name: '← Activity' }).click();
    await page.getByRole('link', { name: 'Last 7 days' }).click();
    await page.waitForURL(/chart=7d/);
    expect(await page.locator('details.chart-data tbody tr').count()).toBe(7);
    expect(await page.locator('svg.chart rect.bar').count()).toBeGreaterThanOrEqual(2);
    await check('activity-7d');

    const res = await page.goto(`${t.baseUrl}/console/accounts/${accountId}/activity?from=2026-02-31T10:00`);
    expect(res?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('From must be a date and time');
    await check('activity-refused');
  });

  it('a member sees only the requests of their own app; the CSP refused nothing', async () => {
    await context.clearCookies();
    await signIn(member);
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/activity`);
    expect(await rows()).toHaveLength(2);
    const log = (await page.locator('table.log').textContent())!;
    expect(log).toContain('Cursor');
    for (const text of ['Claude Desktop', 'ci-runner', 'CI key']) expect(log).not.toContain(text);
    expect(await page.locator('#f-credential option').allTextContents()).toEqual(['Any', 'Cursor (app)']);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(
      readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual(await rows());
    await check('activity-member');
    expect(cspErrors).toEqual([]);
  });

  it("in New York, From and To are New York times: the URL has the exact moment, the fields show it again in New York's time", async () => {
    // Every request above was made in the last few minutes: a window from 5 minutes ago to 5 minutes
    // on has them all, where the same wall-clock times read as UTC (4 or 5 hours earlier) have none.
    const now = Date.now();
    const from = toMinute(now - 5 * MINUTE);
    const to = toMinute(now + 5 * MINUTE);
    await context.close();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'America/New_York', locale: 'en-US' });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    await signIn(owner);
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.waitForURL(`**/console/accounts/${accountId}/activity`);
    const all = await rows();
    expect(all).toHaveLength(13);
    expect(await page.locator('label[for="f-from"]').textContent()).toBe('From (America/New_York)');
    expect(await page.locator('label[for="f-to"]').textContent()).toBe('To (America/New_York)');

    await page.locator('#f-from').fill(newYork(from));
    await page.locator('#f-to').fill(newYork(to));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/from=/);
    let query = new URL(page.url()).searchParams;
    // Sent with New York's offset (-04:00 or -05:00): the exact moment typed.
    expect(query.get('from')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}-0[45]:00$/);
    expect(new Date(query.get('from')!).toISOString()).toBe(from.toISOString());
    expect(new Date(query.get('to')!).toISOString()).toBe(to.toISOString());
    expect(await rows()).toEqual(all);
    // The page the server made shows the fields in New York's time again, not in UTC.
    expect(await page.locator('#f-from').inputValue()).toBe(newYork(from));
    expect(await page.locator('#f-to').inputValue()).toBe(newYork(to));
    await check('activity-new-york');

    // From a minute after the last request: none. The server's UTC value (a link) is shown in New York's time too.
    const later = toMinute(now + 2 * MINUTE);
    await page.locator('#f-from').fill(newYork(later));
    await page.locator('#f-to').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => !url.searchParams.get('to'));
    query = new URL(page.url()).searchParams;
    expect(new Date(query.get('from')!).toISOString()).toBe(later.toISOString());
    expect(await rows()).toEqual([]);
    expect(await page.getByText('No request matches these filters.').count()).toBe(1);
    await page.goto(`${t.baseUrl}/console/accounts/${accountId}/activity?from=${from.toISOString().slice(0, 16)}`);
    expect(await page.locator('#f-from').inputValue()).toBe(newYork(from));
    expect(await rows()).toEqual(all);
    expect(cspErrors).toEqual([]);
  });
});
