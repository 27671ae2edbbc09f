import { ActivityWriterService } from '../../src/activity/activity-writer.service.js';
import { Clock } from '../../src/common/clock.js';
import { admin, ISO, MISSING_ID, newAccount, newProject, UUID, walk } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { call, expectError } from './admin-helpers.js';

describe('admin API: lists, cursors, activity and jobs', () => {
  let t: TestApp;
  let accountId: string;
  let projectId: string;
  /** Made in this order, so newest first is the reverse. */
  const projects: string[] = [];
  const keys: string[] = [];
  const grants: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    accountId = (await newAccount(t)).id;
    for (let i = 0; i < 7; i++) projects.push((await newProject(t, accountId, `P${i}`)).id);
    projectId = projects[0];
    for (let i = 0; i < 7; i++) {
      keys.push(
        (
          await admin(
            t,
            'post',
            `/admin/v1/accounts/${accountId}/api-keys`,
            { name: `key ${i}`, scopes: ['read'], projects: [{ project_id: projectId, role: 'viewer' }] },
            201,
          )
        ).id,
      );
      grants.push((await admin(t, 'post', `/admin/v1/accounts/${accountId}/grants`, { client_name: `grant ${i}`, scopes: ['read'], projects: [] }, 201)).id);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const lists = () => [
    { name: 'projects', path: `/admin/v1/accounts/${accountId}/projects`, ids: projects },
    { name: 'api-keys', path: `/admin/v1/accounts/${accountId}/api-keys`, ids: keys },
    { name: 'grants', path: `/admin/v1/accounts/${accountId}/grants`, ids: grants },
  ];

  it.each(['projects', 'api-keys', 'grants'])('%s: walking with limit=3 gives every item once, newest first, then next_cursor null', async (name) => {
    const { path, ids } = lists().find((l) => l.name === name)!;
    const pages = await walk(t, path, 3);
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
    for (const page of pages.slice(0, -1)) expect(typeof page.next_cursor).toBe('string');
    expect(pages[pages.length - 1].next_cursor).toBeNull();
    const seen = pages.flatMap((p) => p.items.map((i: { id: string }) => i.id));
    expect(seen).toEqual([...ids].reverse());
    const created = pages.flatMap((p) => p.items.map((i: { created_at: string }) => new Date(i.created_at).getTime()));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it.each(['projects', 'api-keys', 'grants'])('%s: a limit equal to the count ends with next_cursor null, not an empty page', async (name) => {
    const { path, ids } = lists().find((l) => l.name === name)!;
    const page = await admin(t, 'get', `${path}?limit=${ids.length}`, undefined, 200);
    expect(page.items).toHaveLength(ids.length);
    expect(page.next_cursor).toBeNull();
    const byOne = await walk(t, path, 1);
    expect(byOne).toHaveLength(ids.length);
    expect(byOne.flatMap((p) => p.items.map((i: { id: string }) => i.id))).toEqual([...ids].reverse());
  });

  it('defaults to 50 items a page and allows 200', async () => {
    const account = await newAccount(t);
    for (let i = 0; i < 52; i++) await newProject(t, account.id, `N${i}`);
    const first = await admin(t, 'get', `/admin/v1/accounts/${account.id}/projects`, undefined, 200);
    expect(first.items).toHaveLength(50);
    expect(first.next_cursor).toEqual(expect.any(String));
    const rest = await admin(t, 'get', `/admin/v1/accounts/${account.id}/projects?cursor=${encodeURIComponent(first.next_cursor)}`, undefined, 200);
    expect(rest.items).toHaveLength(2);
    expect(rest.next_cursor).toBeNull();
    const all = await admin(t, 'get', `/admin/v1/accounts/${account.id}/projects?limit=200`, undefined, 200);
    expect(all.items).toHaveLength(52);
    expect(all.next_cursor).toBeNull();
  });

  const LIST_PATHS = ['projects', 'api-keys', 'grants', 'activity', 'jobs'];

  it.each(LIST_PATHS)('%s: ?limit=0, 201, -1, 1.5, abc and an empty cursor list are 400', async (list) => {
    for (const query of ['limit=0', 'limit=201', 'limit=-1', 'limit=1.5', 'limit=abc', 'limit=', 'cursor=a&cursor=b']) {
      const res = await call(t, 'get', `/admin/v1/accounts/${accountId}/${list}?${query}`);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'validation_failed' });
    }
  });

  it.each(LIST_PATHS)('%s: limits 1 and 200 are accepted', async (list) => {
    for (const limit of [1, 200]) {
      const res = await call(t, 'get', `/admin/v1/accounts/${accountId}/${list}?limit=${limit}`);
      expect(res.status).toBe(200);
    }
  });

  it.each(LIST_PATHS)('%s: a garbled cursor is a 400 that says to start again', async (list) => {
    for (const cursor of ['garbage', '!!!', Buffer.from('not-a-uuid').toString('base64url'), 'x'.repeat(500)]) {
      const error = expectError(await call(t, 'get', `/admin/v1/accounts/${accountId}/${list}?cursor=${encodeURIComponent(cursor)}`), 400, 'validation_failed');
      expect(error.message).toMatch(/cursor/);
    }
  });

  it.each(LIST_PATHS)('%s: an unknown query parameter is a 400', async (list) => {
    const error = expectError(await call(t, 'get', `/admin/v1/accounts/${accountId}/${list}?sort=asc`), 400, 'validation_failed');
    expect(error.details).toEqual(['property sort should not exist']);
  });

  it.each(LIST_PATHS)('%s: an unknown account is a 404, a malformed one a 400', async (list) => {
    expectError(await call(t, 'get', `/admin/v1/accounts/${MISSING_ID}/${list}`), 404, 'not_found');
    expectError(await call(t, 'get', `/admin/v1/accounts/${accountId.slice(0, -1)}/${list}`), 400, 'validation_failed');
  });

  it('a cursor of one account shows nothing of another', async () => {
    const page = await admin(t, 'get', `/admin/v1/accounts/${accountId}/projects?limit=2`, undefined, 200);
    const other = await newAccount(t);
    const otherProject = await newProject(t, other.id);
    const res = await admin(t, 'get', `/admin/v1/accounts/${other.id}/projects?cursor=${encodeURIComponent(page.next_cursor)}`, undefined, 200);
    // The other account's project is newer than the cursor, so nothing older is left to show for it.
    expect(res.items.map((p: { id: string }) => p.id)).not.toContain(otherProject.id);
    for (const p of res.items) expect(p.account_id).toBe(other.id);
  });

  describe('GET /admin/v1/accounts/:account_id/activity', () => {
    let activityAccount: string;
    let keyId: string;
    let grantId: string;

    beforeAll(async () => {
      activityAccount = (await newAccount(t)).id;
      const project = await newProject(t, activityAccount);
      keyId = (
        await admin(
          t,
          'post',
          `/admin/v1/accounts/${activityAccount}/api-keys`,
          { name: 'agent key', scopes: ['read'], projects: [{ project_id: project.id, role: 'owner' }] },
          201,
        )
      ).id;
      grantId = (await admin(t, 'post', `/admin/v1/accounts/${activityAccount}/grants`, { client_name: 'Claude', scopes: ['read'], projects: [] }, 201)).id;
      const activity = t.app.get(ActivityWriterService);
      const base = { accountId: activityAccount, sessionId: null, durationMs: 3, requestId: null };
      const key = { type: 'api_key', id: keyId, name: 'agent key' };
      await activity.record({
        ...base,
        credential: key,
        client: { name: 'my-agent', version: '1.0.0' },
        method: 'initialize',
        tool: null,
        projectId: null,
        outcome: 'ok',
        error: null,
      });
      await activity.record({
        ...base,
        credential: key,
        client: { name: 'my-agent', version: '1.0.0' },
        method: 'tools/call',
        tool: 'list_articles',
        projectId: project.id,
        outcome: 'ok',
        error: null,
        sessionId: 's-1',
      });
      await activity.record({
        ...base,
        credential: key,
        client: null,
        method: 'tools/call',
        tool: 'generate_image',
        projectId: project.id,
        outcome: 'denied',
        error: { code: -32602, message: 'Missing scope generate.' },
      });
      // Four refusals in one second: folded into one entry of count 4.
      jest.spyOn(t.app.get(Clock), 'now').mockReturnValue(new Date());
      const refusal = {
        ...base,
        credential: { type: 'grant', id: grantId, name: 'Claude' },
        client: null,
        method: 'tools/list',
        tool: null,
        projectId: null,
        outcome: 'rate_limited',
        error: null,
      } as const;
      try {
        for (let i = 0; i < 4; i++) await activity.record(refusal);
      } finally {
        jest.restoreAllMocks();
      }
      // Another tenant's entry must never show.
      await activity.record({
        ...base,
        accountId,
        credential: { type: 'api_key', id: keys[0], name: 'key 0' },
        client: null,
        method: 'tools/list',
        tool: null,
        projectId: null,
        outcome: 'ok',
        error: null,
      });
    });

    it("lists the account's entries newest first in the documented shape", async () => {
      const res = await call(t, 'get', `/admin/v1/accounts/${activityAccount}/activity`);
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.items.map((e: { method: string }) => e.method)).toEqual(['tools/list', 'tools/call', 'tools/call', 'initialize']);
      const [limited, denied, ok] = res.body.items;
      for (const entry of res.body.items) {
        expect(Object.keys(entry).sort()).toEqual([
          'at',
          'client',
          'count',
          'credential',
          'duration_ms',
          'error',
          'id',
          'method',
          'outcome',
          'project_id',
          'request_id',
          'session_id',
          'tool',
        ]);
        expect(entry.id).toMatch(UUID);
        expect(entry.at).toMatch(ISO);
      }
      expect(limited).toMatchObject({
        credential: { type: 'grant', id: grantId, name: 'Claude' },
        client: null,
        outcome: 'rate_limited',
        count: 4,
        error: null,
        tool: null,
        project_id: null,
        session_id: null,
      });
      expect(denied).toMatchObject({
        tool: 'generate_image',
        outcome: 'denied',
        error: { code: -32602, message: 'Missing scope generate.' },
        count: 1,
        duration_ms: 3,
      });
      expect(ok).toMatchObject({
        credential: { type: 'api_key', id: keyId, name: 'agent key' },
        client: { name: 'my-agent', version: '1.0.0' },
        tool: 'list_articles',
        session_id: 's-1',
        outcome: 'ok',
      });
    });

    it('filters by outcome, credential_id, method and tool', async () => {
      const get = async (q: string) => (await admin(t, 'get', `/admin/v1/accounts/${activityAccount}/activity?${q}`, undefined, 200)).items;
      expect((await get('outcome=denied')).map((e: { tool: string }) => e.tool)).toEqual(['generate_image']);
      expect((await get(`credential_id=${grantId}`)).map((e: { outcome: string }) => e.outcome)).toEqual(['rate_limited']);
      expect(await get('method=tools%2Fcall')).toHaveLength(2);
      expect(await get('tool=list_articles&outcome=ok')).toHaveLength(1);
      expect(await get('tool=list_articles&outcome=denied')).toHaveLength(0);
    });

    it('pages through the entries with the cursor', async () => {
      const pages = await walk(t, `/admin/v1/accounts/${activityAccount}/activity`, 3);
      expect(pages.map((p) => p.items.length)).toEqual([3, 1]);
      const all = await admin(t, 'get', `/admin/v1/accounts/${activityAccount}/activity`, undefined, 200);
      expect(pages.flatMap((p) => p.items)).toEqual(all.items);
    });

    it('answers 400 for a bad outcome or credential_id filter', async () => {
      expectError(await call(t, 'get', `/admin/v1/accounts/${activityAccount}/activity?outcome=great`), 400, 'validation_failed');
      expectError(await call(t, 'get', `/admin/v1/accounts/${activityAccount}/activity?credential_id=abc`), 400, 'validation_failed');
    });
  });

  describe('GET /admin/v1/accounts/:account_id/jobs', () => {
    it('answers an empty list for an account with no job', async () => {
      const res = await call(t, 'get', `/admin/v1/accounts/${accountId}/jobs`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [], next_cursor: null });
      expect((await call(t, 'get', `/admin/v1/accounts/${accountId}/jobs?status=queued&project_id=${projectId}&limit=10`)).body).toEqual({
        items: [],
        next_cursor: null,
      });
    });

    it('answers 400 for a bad status or project_id filter', async () => {
      expectError(await call(t, 'get', `/admin/v1/accounts/${accountId}/jobs?status=sleeping`), 400, 'validation_failed');
      expectError(await call(t, 'get', `/admin/v1/accounts/${accountId}/jobs?project_id=nope`), 400, 'validation_failed');
    });
  });
});
