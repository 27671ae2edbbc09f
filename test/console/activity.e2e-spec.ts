import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { v7 } from 'uuid';
import { ActivityWriterRepository, type ActivityInsert } from '../../src/activity/activity-writer.repository.js';
import { newAccountWithProjects, newKey } from '../support/fixtures.js';
import { call, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The console's Activity page over HTTP (docs/console.md#activity): an owner sees the
// account's requests, a member those of their own grants; filters narrow the log and a refused value
// is the page again with a sentence (400, never 500); cursor pages; an entry's page; the CSV of the
// filtered rows; the chart; another account's ids and entries one may not see are the same 404 page.

const MISSING = '00000000-0000-7000-8000-000000000000';
const ENTRY_LINK = /href="\/console\/accounts\/[0-9a-f-]{36}\/activity\/([0-9a-f-]{36})"/g;

/** The entry ids listed on an Activity page, in order. */
const listed = (text: string): string[] => [...text.matchAll(ENTRY_LINK)].map((m) => m[1]);

describe('console activity page', () => {
  let t: TestApp;
  let accountId: string;
  let projectIds: string[];
  let owner: ConsoleSession;
  let member: ConsoleSession;
  let other: { accountId: string; session: ConsoleSession; entryId: string };
  let key: { key: string; id: string };
  let ownerGrant: { token: string; id: string };
  let memberGrant: { token: string; id: string };
  let memberSessionId: string;
  /** Entries written straight to the log: a folded refusal and a tool error with its message. */
  let folded: ActivityInsert;
  let failed: ActivityInsert;

  const { get } = consoleHttp(() => t);
  const page = (rest = '') => `/console/accounts/${accountId}/activity${rest}`;

  /** Initializes a session as `client` and calls `tool` in it; answers the session id. */
  async function useAs(token: string, client: string, tool: string, args: Record<string, unknown> = {}): Promise<string> {
    const { sessionId } = await initSession(t, token, '2025-06-18', { name: client, version: '2.0.0' });
    const res = await rpc(t, token, call(2, tool, args), sessionHeaders(sessionId));
    expect(res.status).toBe(200);
    return sessionId;
  }

  function entry(over: Partial<ActivityInsert>): ActivityInsert {
    const at = over.at ?? new Date();
    return {
      id: v7({ msecs: at.getTime() }),
      at,
      account_id: accountId,
      credential_type: 'api_key',
      credential_id: key.id,
      credential_name: 'ci key',
      client_name: 'ci-runner',
      client_version: '2.0.0',
      session_id: null,
      method: 'tools/call',
      tool: 'list_articles',
      project_id: projectIds[0],
      outcome: 'ok',
      error: null,
      duration_ms: 4,
      count: 1,
      fold_key: null,
      request_id: null,
      ...over,
    };
  }

  beforeAll(async () => {
    t = await startTestApp();
    ({ accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Cooking' }, { name: 'Travel' }]));
    const ownerUser = await newUser(t);
    const memberUser = await newUser(t);
    await addAccountMember(t, accountId, ownerUser.id, 'owner');
    await addAccountMember(t, accountId, memberUser.id, 'member');
    await addProjectMember(t, accountId, projectIds[0], memberUser.id, 'editor');
    owner = await signedIn(t, ownerUser.id);
    member = await signedIn(t, memberUser.id);
    const client = await newClient(t, { client_name: 'Cursor' });
    ownerGrant = await oauthGrant(t, {
      accountId,
      userId: ownerUser.id,
      clientId: client.client_id,
      clientName: 'Claude Desktop',
      projects: [{ project_id: projectIds[1], role: 'owner' }],
    });
    memberGrant = await oauthGrant(t, {
      accountId,
      userId: memberUser.id,
      clientId: client.client_id,
      clientName: 'Cursor',
      projects: [{ project_id: projectIds[0], role: 'editor' }],
    });
    // Viewer on Cooking, editor on Travel: create_article is in its catalogue, and refused on Cooking.
    key = await newKey(
      t,
      accountId,
      [
        { project_id: projectIds[0], role: 'viewer' },
        { project_id: projectIds[1], role: 'editor' },
      ],
      undefined,
      'ci key',
    );

    // Real requests on /mcp: each is in the log when its answer has left.
    await useAs(key.key, 'ci-runner', 'list_projects');
    await useAs(key.key, 'ci-runner', 'create_article', { project_id: projectIds[0], title: 'Nope', body_markdown: 'x' }); // viewer: denied
    await useAs(ownerGrant.token, 'Claude Desktop', 'list_projects');
    memberSessionId = await useAs(memberGrant.token, 'Cursor', 'list_projects');

    const repository = t.app.get(ActivityWriterRepository);
    const second = Math.floor(Date.now() / 1000);
    folded = entry({ outcome: 'rate_limited', count: 7, tool: 'list_articles', fold_key: `rate_limited:${key.id}:${second}` });
    failed = entry({
      at: new Date(Date.now() + 1),
      outcome: 'tool_error',
      tool: 'get_article',
      error: JSON.stringify({ code: -32000, message: 'No article with id "x<y>".' }),
      session_id: 'sess-123',
    });
    await repository.insert([folded, failed]);

    const foreign = await newAccountWithProjects(t, [{ name: 'Elsewhere' }]);
    const otherOwner = await newUser(t);
    await addAccountMember(t, foreign.accountId, otherOwner.id, 'owner');
    const otherKey = await newKey(t, foreign.accountId, [{ project_id: foreign.projectIds[0], role: 'owner' }], undefined, 'foreign key');
    await useAs(otherKey.key, 'foreign-client', 'list_projects');
    const otherSession = await signedIn(t, otherOwner.id);
    const otherPage = await get(`/console/accounts/${foreign.accountId}/activity`, otherSession);
    other = { accountId: foreign.accountId, session: otherSession, entryId: listed(otherPage.text)[0] };
  }, 60_000);

  afterAll(() => t?.close());

  it('needs a session: the sign-in page, back to the page asked for', async () => {
    for (const path of [page(), page(`/${failed.id}`), page('/export?outcome=ok')]) {
      const res = await get(path);
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/oauth/login?return_to=${encodeURIComponent(path)}`);
    }
  });

  it("an owner sees the account's requests newest first, with client, key or app, tool, project, outcome, duration and count", async () => {
    const res = await get(page(), owner);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    expect(res.text).not.toMatch(/style="|<style|<script>/);
    expect(res.text).toContain('aria-current="page">Activity</a>');
    // Each client's initialize and tool call, and the two entries written above.
    const ids = listed(res.text);
    expect(ids.length).toBe(10);
    expect([...ids].sort().reverse()).toEqual(ids);
    expect(ids[0]).toBe(failed.id);
    for (const text of [
      'ci-runner',
      'Claude Desktop',
      'Cursor',
      'ci key (API key)',
      'Cursor (app)',
      'create_article',
      'Cooking',
      'Denied',
      'Rate limited',
      'Tool error',
    ])
      expect(res.text).toContain(text);
    // The folded refusal shows its count.
    expect(res.text).toMatch(/Rate limited<\/span><\/td>\s*<td class="num">4 ms<\/td>\s*<td class="num">7<\/td>/);
    expect(res.text).not.toContain('foreign-client');
  });

  it('a member sees only the requests of their own grants', async () => {
    const res = await get(page(), member);
    expect(res.status).toBe(200);
    const ids = listed(res.text);
    expect(ids).toHaveLength(2);
    expect(res.text).toContain('Cursor');
    for (const text of ['ci-runner', 'Claude Desktop', 'ci key']) expect(res.text).not.toContain(text);
    // The key filter offers only their own app.
    expect(res.text).toContain(`<option value="${memberGrant.id}">Cursor (app)</option>`);
    expect(res.text).not.toContain(key.id);
    // Another person's credential as a filter narrows to nothing (it is not theirs to see).
    const forced = await get(`${page()}?credential=${key.id}`, member);
    expect(forced.status).toBe(200);
    expect(listed(forced.text)).toEqual([]);
  });

  it('each filter narrows the log, and the filters stay in the form', async () => {
    const count = async (query: string) => {
      const res = await get(`${page()}?${query}`, owner);
      expect([query, res.status]).toEqual([query, 200]);
      return listed(res.text).length;
    };
    expect(await count('outcome=denied')).toBe(1);
    expect(await count('outcome=ok')).toBe(7);
    expect(await count('tool=list_projects')).toBe(3);
    expect(await count(`credential=${key.id}`)).toBe(6);
    expect(await count(`credential=${memberGrant.id}`)).toBe(2);
    expect(await count('client=Claude+Desktop')).toBe(2);
    expect(await count('client=ci-runner&outcome=ok')).toBe(3);
    const soon = new Date(Date.now() + 3_600_000).toISOString().slice(0, 16);
    const before = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);
    expect(await count(`from=${before}&to=${soon}`)).toBe(10);
    expect(await count(`from=${soon}`)).toBe(0);
    expect(await count(`to=${before}`)).toBe(0);
    // With an offset too.
    expect(await count(`from=${encodeURIComponent(`${before}:00+00:00`)}`)).toBe(10);

    const res = await get(`${page()}?outcome=denied&client=ci-runner&from=${before}`, owner);
    expect(res.text).toContain('<option value="denied" selected>');
    expect(res.text).toContain('value="ci-runner"');
    expect(res.text).toContain(`value="${before}"`);
    const empty = await get(`${page()}?from=${soon}`, owner);
    expect(empty.text).toContain('No request matches these filters.');
  });

  it('refuses bad filter values with the page and a sentence (400), never a server error', async () => {
    const cases: [string, string][] = [
      ['outcome=nope', 'Choose an outcome from the list.'],
      ['credential=not-an-id', 'Choose a key or app from the list.'],
      ['from=2026-02-31T10:00', 'From must be a date and time'],
      ['from=yesterday', 'From must be a date and time'],
      ['to=2026-13-01T00:00', 'To must be a date and time'],
      ['from=2026-05-02T00:00&to=2026-05-01T00:00', 'before To'],
      [`client=${'x'.repeat(201)}`, 'A client name is 1 to 200 characters.'],
      [`tool=${'x'.repeat(101)}`, 'A tool name is 1 to 100 characters.'],
      ['outcome=ok&outcome=denied', 'Give each filter once'],
    ];
    // The page's own fields (the export has no pages and no chart).
    const badCursor = await get(`${page()}?cursor=garbage`, owner);
    expect(badCursor.status).toBe(400);
    expect(badCursor.text).toContain('This page link is not valid');
    // An impossible date is shown as typed, not rolled over into March.
    const february = await get(`${page()}?from=2026-02-31T10:00`, owner);
    expect(february.text).toContain('id="f-from" name="from" value="2026-02-31T10:00"');
    const badChart = await get(`${page()}?chart=1y`, owner);
    expect(badChart.status).toBe(400);
    expect(badChart.text).toContain('The chart shows the last 24 hours or the last 7 days.');
    for (const [query, sentence] of cases) {
      for (const path of [page(), page('/export')]) {
        const res = await get(`${path}?${query}`, owner);
        expect([path, query, res.status]).toEqual([path, query, 400]);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('role="alert"');
        expect(res.text).toContain(sentence.replace(/"/g, '&quot;'));
        // The form is there to fix it; the sentence comes first, above the chart, where a phone shows it.
        expect(res.text).toContain('Apply filters');
        expect(res.text.indexOf('role="alert"')).toBeLessThan(res.text.indexOf('<h2>Requests per'));
        expect(res.text).not.toContain('(UTC), before To');
      }
    }
  });

  it('pages by cursor: older pages only, each entry once, "Newest" back to the start', async () => {
    const repository = t.app.get(ActivityWriterRepository);
    const base = Date.now() - 60_000;
    await repository.insert(Array.from({ length: 55 }, (_, i) => entry({ at: new Date(base + i), tool: 'list_jobs', client_name: 'pager' })));
    const first = await get(`${page()}?client=pager`, owner);
    const firstIds = listed(first.text);
    expect(firstIds).toHaveLength(50);
    expect(first.text).not.toContain('>Newest</a>');
    const next = /href="([^"]+)" rel="next"/.exec(first.text)![1].replace(/&amp;/g, '&');
    expect(next).toMatch(/client=pager&cursor=/);
    const second = await get(next, owner);
    const secondIds = listed(second.text);
    expect(secondIds).toHaveLength(5);
    expect(new Set([...firstIds, ...secondIds]).size).toBe(55);
    expect(second.text).not.toContain('rel="next"');
    expect(second.text).toContain(`href="${page()}?client=pager">Newest</a>`);
  });

  it("opens an entry: the error's message and the session", async () => {
    const res = await get(page(`/${failed.id}`), owner);
    expect(res.status).toBe(200);
    expect(res.text).toContain('No article with id &quot;x&lt;y&gt;&quot;.');
    expect(res.text).toContain('-32000');
    expect(res.text).toContain('sess-123');
    expect(res.text).toContain('get_article');
    const fold = await get(page(`/${folded.id}`), owner);
    expect(fold.text).toContain('7 requests folded into this entry');
    // A member opens their own entry, with its session.
    const mine = listed((await get(page(), member)).text)[0];
    const own = await get(page(`/${mine}`), member);
    expect(own.status).toBe(200);
    expect(own.text).toContain(memberSessionId);
  });

  it("another account's ids, entries a member may not see and ids that do not exist: the same 404 page", async () => {
    const notFound = (await get(`/console/accounts/${MISSING}/activity`, owner)).text;
    const notFoundForMember = (await get(`/console/accounts/${MISSING}/activity`, member)).text;
    const paths = [
      `/console/accounts/${other.accountId}/activity`,
      `/console/accounts/${other.accountId}/activity/export`,
      `/console/accounts/${other.accountId}/activity/${other.entryId}`,
      page(`/${other.entryId}`),
      page(`/${MISSING}`),
      page('/not-an-id'),
      `/console/accounts/not-an-id/activity`,
      `/console/accounts/${MISSING}/activity/export`,
    ];
    for (const path of paths) {
      const res = await get(path, owner);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    for (const path of [page(`/${failed.id}`), page(`/${folded.id}`)]) {
      const res = await get(path, member);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFoundForMember);
    }
    // And the other account's owner does not see this one.
    expect((await get(page(), other.session)).status).toBe(404);
  });

  it('exports the filtered rows as CSV: a download with the same rows as the list', async () => {
    for (const [session, query] of [
      [owner, 'outcome=ok'],
      [owner, `credential=${key.id}`],
      [owner, ''],
      [member, ''],
    ] as const) {
      // Every page of the list (the pager's 55 entries make two for the owner).
      const shown: string[] = [];
      for (let path: string | undefined = `${page()}?${query}`; path;) {
        const text: string = (await get(path, session)).text;
        shown.push(...listed(text));
        path = /href="([^"]+)" rel="next"/.exec(text)?.[1].replace(/&amp;/g, '&');
      }
      const res = await get(`${page('/export')}?${query}`, session)
        .buffer(true)
        .parse((r, done) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (c: string) => (text += c));
          r.on('end', () => done(null, text));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="reblog-activity-\d{8}-\d{4}\.csv"$/);
      expect(res.headers['cache-control']).toBe('no-store');
      const lines = (res.body as string).trim().split('\n');
      expect(lines[0]).toMatch(/^id,at,credential_type,credential_id/);
      const ids = lines.slice(1).map((l) => l.split(',')[0]);
      expect([query, ids]).toEqual([query, shown]);
    }
    // The page's CSV link carries the filters.
    const filtered = await get(`${page()}?outcome=ok&chart=7d`, owner);
    expect(filtered.text).toContain(`href="${page('/export')}?outcome=ok" download>Export CSV</a>`);
  });

  it('draws the chart: a bar per outcome and hour with a title, the figures as a table; by day over 7 days', async () => {
    const res = await get(page(), owner);
    const bars = res.text.match(/<rect class="bar o-[a-z_]+"/g) ?? [];
    // This hour: ok, denied, rate_limited, tool_error (one bucket, four outcomes), maybe the hour before for the pager's entries.
    expect(bars.length).toBeGreaterThanOrEqual(4);
    expect(res.text).toMatch(/<title data-at="[^"]+" data-what="7 Rate limited">7 Rate limited · /);
    expect(res.text).toContain('role="img" aria-label="Requests per hour over the last 24 hours, stacked by outcome:');
    // 24 hourly rows in the figures' table.
    const table = /<details class="chart-data">[\s\S]*?<\/details>/.exec(res.text)![0];
    expect(table.match(/<th scope="row">/g)).toHaveLength(24);
    const week = await get(`${page()}?chart=7d`, owner);
    expect(week.status).toBe(200);
    expect(/<details class="chart-data">[\s\S]*?<\/details>/.exec(week.text)![0].match(/<th scope="row">/g)).toHaveLength(7);
    expect(week.text).toContain('Requests per day over the last 7 days');
    // A member's chart counts their own requests only.
    const mine = await get(page(), member);
    expect(mine.text).toContain('stacked by outcome: 2 in all.');
    expect(res.text).toMatch(/stacked by outcome: (6[5-9]|7\d) in all\./);
  });

  it('has no form that changes anything: a post here is refused without the csrf (403) and is no page with it (404)', async () => {
    const refused = await t.http.post(page()).type('form').set('Cookie', owner.cookie).send('outcome=ok').redirects(0);
    expect(refused.status).toBe(403);
    const crossSite = await t.http
      .post(page())
      .type('form')
      .set('Cookie', owner.cookie)
      .set('Sec-Fetch-Site', 'cross-site')
      .send(`csrf=${owner.csrf}`)
      .redirects(0);
    expect(crossSite.status).toBe(403);
    const none = await t.http.post(page()).type('form').set('Cookie', owner.cookie).send(`csrf=${owner.csrf}`).redirects(0);
    expect(none.status).toBe(404);
  });
});
