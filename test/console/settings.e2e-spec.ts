import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { eventually, startInstances, type TestDatabase } from '../support/database.js';
import { admin, newAccountWithProjects, newKey } from '../support/fixtures.js';
import { callOk, rpc } from '../support/mcp-client.js';
import { addAccountMember, addProjectMember, newUser, signedIn } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

// docs/console.md#project-settings over HTTP, on two instances sharing one database: the
// console runs on `a`, AI clients call `b`. Owners only (a member, even a project owner, gets the
// 404 page); every id is checked (another account's ids answer the same 404 page as ids that do not
// exist, on the page and both forms); posts need the session's csrf from this site; a tool turned off
// in the console leaves tools/list on the other instance at its next request; the writer's answers
// are saved as a new version (AgentsService.configure, as configure_agent) and listed newest first.

const MISSING = '00000000-0000-7000-8000-000000000000';
/** Well under the principal cache's 3 s: a change must reach the other instance by notification, not expiry. */
const SOON = 1_000;
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe('console project settings', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let accountId: string;
  let projectIds: string[];
  let ownerSession: ConsoleSession;
  let memberSession: ConsoleSession;
  let key: { key: string; id: string };
  let other: { accountId: string; projectId: string; session: ConsoleSession };

  const { get, post } = consoleHttp(() => a);
  const settings = (rest = '', account = accountId, project = projectIds[0]) =>
    `/console/accounts/${account}/projects/${project}/settings${rest ? `/${rest}` : ''}`;
  const toolNames = async (t: TestApp) => ((await rpc(t, key.key, LIST)).body.result.tools as { name: string }[]).map((tool) => tool.name);
  const disabledTools = async (projectId = projectIds[0], account = accountId): Promise<string[]> =>
    (await admin(a, 'get', `/admin/v1/accounts/${account}/projects?limit=100`)).items.find((p: { id: string }) => p.id === projectId).disabled_tools;
  /** The tools form as the page sends it: every tool listed, the ticked ones enabled. */
  const toolsForm = (page: string) => ({
    tool: [...page.matchAll(/name="tool" value="([a-z_]+)"/g)].map((m) => m[1]),
    enabled: [...page.matchAll(/name="enabled" value="([a-z_]+)" checked/g)].map((m) => m[1]),
  });
  const writer = {
    audience: 'Home cooks',
    tone: 'Warm',
    language: 'en',
    topics: 'bread, baking',
    length: 'short',
    banned_words: '',
    image_style: 'watercolour',
  };

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, {}));
    ({ accountId, projectIds } = await newAccountWithProjects(a, [{ name: 'Cooking' }, { name: 'Travel', disabled_tools: ['delete_article'] }]));
    const owner = await newUser(a);
    const member = await newUser(a);
    await addAccountMember(a, accountId, owner.id, 'owner');
    await addAccountMember(a, accountId, member.id, 'member');
    // A project owner who is not an account owner: still no settings page.
    await addProjectMember(a, accountId, projectIds[0], member.id, 'owner');
    ownerSession = await signedIn(a, owner.id);
    memberSession = await signedIn(a, member.id);
    key = await newKey(a, accountId, [{ project_id: projectIds[0], role: 'owner' }], ['read', 'write', 'generate', 'delete'], 'ci key');

    const foreign = await newAccountWithProjects(a, [{ name: 'Elsewhere' }]);
    const otherOwner = await newUser(a);
    await addAccountMember(a, foreign.accountId, otherOwner.id, 'owner');
    other = { accountId: foreign.accountId, projectId: foreign.projectIds[0], session: await signedIn(a, otherOwner.id) };
  }, 120_000);

  afterAll(() => db?.drop());

  it('sends a visitor with no session to the sign-in page; the overview links each project to its settings, for owners only', async () => {
    const res = await get(settings());
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/oauth/login?return_to=${encodeURIComponent(settings())}`);
    const form = await post(settings('tools'), undefined, { csrf: 'x' });
    expect(form.status).toBe(303);
    expect(form.headers.location).toBe('/oauth/login?return_to=%2Fconsole%2F');

    const overview = await get(`/console/accounts/${accountId}`, ownerSession);
    expect(overview.text).toContain(`href="${settings()}"`);
    expect(overview.text).toContain(`href="${settings('', accountId, projectIds[1])}"`);
    const mine = await get(`/console/accounts/${accountId}`, memberSession);
    expect(mine.status).toBe(200);
    expect(mine.text).not.toContain('/settings');
  });

  it("a member (even a project owner), another account's ids and ids that do not exist get the same 404 page on the page and both forms", async () => {
    // The page names who is signed in: compare each person's answers with their own 404 page.
    const notFound = async (who: ConsoleSession) => (await get(`/console/accounts/${MISSING}`, who)).text;
    expect(await notFound(ownerSession)).toContain('Not found');
    const s = ownerSession;
    const places: [string, ConsoleSession][] = [
      [settings('', accountId, projectIds[0]), memberSession],
      [settings('', accountId, other.projectId), s],
      [settings('', other.accountId, other.projectId), s],
      [settings('', other.accountId, projectIds[0]), s],
      [settings('', accountId, MISSING), s],
      [settings('', accountId, 'not-an-id'), s],
      [settings('', MISSING, projectIds[0]), s],
      [settings('', 'not-an-id', projectIds[0]), s],
      // The other account's owner, at this account's project.
      [settings('', accountId, projectIds[0]), other.session],
    ];
    for (const [path, who] of places) {
      const page = await get(path, who);
      expect([path, page.status]).toEqual([path, 404]);
      expect(page.text).toBe(await notFound(who));
      for (const form of ['tools', 'writer']) {
        const res = await post(`${path}/${form}`, who, { csrf: who.csrf, tool: 'list_articles', tone: 'Hijacked' });
        expect([`${path}/${form}`, res.status]).toEqual([`${path}/${form}`, 404]);
        expect(res.text).toBe(await notFound(who));
      }
    }
    // Nothing was changed by any of it.
    expect(await disabledTools()).toEqual([]);
    expect(await disabledTools(other.projectId, other.accountId)).toEqual([]);
    expect((await callOk(a, key.key, 'get_agent_config', { project_id: projectIds[0] })).config).toBeNull();
  });

  it('refuses (403, nothing done) a post without the csrf, with a wrong one, cross-site, or from a foreign Origin', async () => {
    const s = ownerSession;
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{}, {}],
      [{ csrf: 'wrong' }, {}],
      [{ csrf: memberSession.csrf }, {}],
      [{ csrf: s.csrf }, { 'Sec-Fetch-Site': 'cross-site' }],
      [{ csrf: s.csrf }, { Origin: 'https://evil.example' }],
    ];
    for (const [fields, headers] of attempts) {
      const tools = await post(settings('tools'), s, { ...fields, tool: 'list_articles' }, headers);
      expect([fields, headers, tools.status]).toEqual([fields, headers, 403]);
      expect(tools.text).toContain('Nothing was changed');
      const saved = await post(settings('writer'), s, { ...fields, ...writer }, headers);
      expect([fields, headers, saved.status]).toEqual([fields, headers, 403]);
    }
    expect(await disabledTools()).toEqual([]);
    expect((await callOk(a, key.key, 'get_agent_config', { project_id: projectIds[0] })).config).toBeNull();
  });

  it('a tool turned off in the console leaves tools/list of a key on the other instance at its next request; turned on, it is back', async () => {
    const s = ownerSession;
    expect(await toolNames(b)).toContain('list_articles'); // cached by b now
    const page = await get(settings(), s);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    const form = toolsForm(page.text);
    expect(form.tool).toHaveLength(14);
    expect(form.enabled).toHaveLength(14);

    const off = await post(
      settings('tools'),
      s,
      { csrf: s.csrf, tool: form.tool, enabled: form.enabled.filter((t) => t !== 'list_articles') },
      { Origin: new URL(a.config.publicUrl).origin },
    );
    expect(off.status).toBe(303);
    expect(off.headers.location).toBe(`${settings()}?done=tools`);
    expect(await disabledTools()).toEqual(['list_articles']);
    await eventually(
      () => toolNames(b),
      (names) => !names.includes('list_articles'),
      SOON,
      20,
    );
    expect(await toolNames(a)).not.toContain('list_articles');
    expect((await get(`${settings()}?done=__proto__`, s)).text).not.toContain('class="notice"');
    const after = await get(`${settings()}?done=tools`, s);
    expect(after.text).toContain('Tools saved');
    expect(after.text).toContain('name="enabled" value="list_articles">');
    expect(after.text).toContain('13 of 14 tools on');

    const on = await post(settings('tools'), s, { csrf: s.csrf, ...toolsForm(after.text), enabled: [...toolsForm(after.text).enabled, 'list_articles'] });
    expect(on.status).toBe(303);
    expect(await disabledTools()).toEqual([]);
    await eventually(
      () => toolNames(b),
      (names) => names.includes('list_articles'),
      SOON,
      20,
    );
  });

  it('a tool the form did not list keeps its state; names that are no tool are ignored', async () => {
    const s = ownerSession;
    // Travel has delete_article off; a form listing only get_article (unticked) turns that one off too.
    const res = await post(settings('tools', accountId, projectIds[1]), s, { csrf: s.csrf, tool: ['get_article', 'no_such_tool'], enabled: 'no_such_tool' });
    expect(res.status).toBe(303);
    expect((await disabledTools(projectIds[1])).sort()).toEqual(['delete_article', 'get_article']);
    await post(settings('tools', accountId, projectIds[1]), s, { csrf: s.csrf, tool: 'get_article', enabled: 'get_article' });
    expect(await disabledTools(projectIds[1])).toEqual(['delete_article']);
  });

  it('the writer: proposed answers while unset; saving makes a version that get_agent_config answers; the same answers make none; versions newest first', async () => {
    const s = ownerSession;
    const unset = await get(settings(), s);
    expect(unset.text).toContain('The writer is not set up yet');
    expect(unset.text).toContain('Save as version 1');
    expect(unset.text).toContain('No version yet');
    // Proposals from the project's (empty) articles: a language and the neutral defaults.
    expect(unset.text).toMatch(/name="language" maxlength="50" value="en"/);

    const first = await post(settings('writer'), s, { csrf: s.csrf, ...writer, tone: '  Warm  ' });
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe(`${settings()}?done=writer`);
    const v1 = await callOk(b, key.key, 'get_agent_config', { project_id: projectIds[0] });
    expect(v1.config).toMatchObject({ version: 1, answers: writer });

    const same = await post(settings('writer'), s, { csrf: s.csrf, ...writer });
    expect(same.headers.location).toBe(`${settings()}?done=unchanged`);
    expect((await callOk(b, key.key, 'get_agent_config', { project_id: projectIds[0] })).config.version).toBe(1);

    await post(settings('writer'), s, { csrf: s.csrf, ...writer, tone: 'Playful', banned_words: 'delve' });
    const v2 = await callOk(b, key.key, 'get_agent_config', { project_id: projectIds[0] });
    expect(v2.config).toMatchObject({ version: 2, answers: { ...writer, tone: 'Playful', banned_words: 'delve' } });
    // configure_agent from an AI client is a version like the console's.
    await callOk(b, key.key, 'configure_agent', { project_id: projectIds[0], agent: 'writer', answers: { length: 'long' } });

    const page = await get(`${settings()}?done=writer`, s);
    expect(page.text).toContain('saved as a new version');
    expect(page.text).toContain('Current: version 3');
    expect(page.text).toContain('Save as version 4');
    expect(page.text).toMatch(/<select id="writer-length" name="length">.*<option value="long" selected>/s);
    const versions = [...page.text.matchAll(/<strong>Version (\d+)<\/strong>/g)].map((m) => Number(m[1]));
    expect(versions).toEqual([3, 2, 1]);
    const changed = [...page.text.matchAll(/<span class="changed">([^<]*)<\/span>/g)].map((m) => m[1]);
    expect(changed).toEqual(['changed length', 'changed tone, banned words', 'first version']);
    expect(page.text).not.toContain('The writer is not set up yet');
  });

  it('a refused answer shows the form again with a sentence and what was typed, and makes no version', async () => {
    const s = ownerSession;
    const before = (await callOk(a, key.key, 'get_agent_config', { project_id: projectIds[0] })).config.version;
    const badLength = await post(settings('writer'), s, { csrf: s.csrf, ...writer, length: 'endless', audience: 'Typed by me' });
    expect(badLength.status).toBe(400);
    expect(badLength.text).toContain('The answer to &quot;length&quot; must be one of short, medium, long.');
    expect(badLength.text).toContain('Typed by me');
    const tooLong = await post(settings('writer'), s, { csrf: s.csrf, ...writer, tone: 'x'.repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('longer than 200 characters');
    expect((await callOk(a, key.key, 'get_agent_config', { project_id: projectIds[0] })).config.version).toBe(before);
  });
});
