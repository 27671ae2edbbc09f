import { call } from '../admin/admin-helpers.js';
import { eventually, startInstances, type TestDatabase } from '../support/database.js';
import { admin, newAccount, newGrant, newProject, withRole } from '../support/fixtures.js';
import { callTool, rpc } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

/**
 * docs/oauth.md#grants-follow-their-person: what a person may do changes through the admin
 * API of instance A, and their OAuth grant's next request on instance B (which had its principal
 * cached) already reaches what the person reaches now. Each check waits at most `SOON`, well under
 * the principal cache's 3 s, so it fails if B only notices when its entry expires.
 */
const SOON = 1_000;

describe('membership changes reach OAuth grants on every instance at their next request', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
  });
  afterAll(() => db?.drop());

  const toolsList = (token: string) => rpc(b, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const tools = async (token: string) => {
    const res = await toolsList(token);
    if (res.status !== 200) throw new Error(`tools/list answered ${res.status}: ${res.text}`);
    return (res.body.result.tools as { name: string }[]).map((t) => t.name).sort();
  };
  /** `list_projects` on B: the projects as `{id: role}`. */
  const projects = async (token: string): Promise<Record<string, string>> => {
    const out = await callTool(b, token, 'list_projects');
    if (out.status !== 200 || out.isError || out.rpcError) throw new Error(`list_projects failed: ${JSON.stringify(out)}`);
    return Object.fromEntries((out.json.items as { id: string; role: string }[]).map((p) => [p.id, p.role]));
  };
  const put = async (path: string, body: object) => {
    const res = await call(a, 'put', path, body);
    if (res.status !== 200) throw new Error(`PUT ${path} answered ${res.status}: ${res.text}`);
  };
  const soon = <T>(read: () => Promise<T>, done: (value: T) => boolean) => eventually(read, done, SOON, 20);

  /**
   * An account with projects P1 and P2, a member with `roles` there, and their OAuth grant consenting
   * `consented` on both, with an admin-made grant on both beside it.
   */
  async function setUp(roles: { p1?: 'viewer' | 'editor' | 'owner'; p2?: 'viewer' | 'editor' | 'owner' }, consented: 'viewer' | 'editor' | 'owner' = 'editor') {
    const accountId = (await newAccount(a)).id;
    const p1 = (await newProject(a, accountId, 'P1')).id;
    const p2 = (await newProject(a, accountId, 'P2')).id;
    const user = await newUser(a);
    await addAccountMember(a, accountId, user.id, 'member');
    if (roles.p1) await addProjectMember(a, accountId, p1, user.id, roles.p1);
    if (roles.p2) await addProjectMember(a, accountId, p2, user.id, roles.p2);
    const client = await newClient(a, { client_name: 'Cursor' });
    const grant = await oauthGrant(a, { accountId, userId: user.id, clientId: client.client_id, projects: withRole([p1, p2], consented) });
    const adminGrant = await newGrant(a, accountId, withRole([p1, p2], 'editor'));
    return { accountId, p1, p2, userId: user.id, token: grant.token, adminToken: adminGrant.token };
  }

  it('a lowered project role: the grant keeps only the tools of the lower role', async () => {
    const s = await setUp({ p1: 'editor', p2: 'viewer' });
    expect(await projects(s.token)).toEqual({ [s.p1]: 'editor', [s.p2]: 'viewer' });
    expect(await tools(s.token)).toContain('create_article');

    await put(`/admin/v1/projects/${s.p1}/members/${s.userId}`, { role: 'viewer' });
    await soon(
      () => tools(s.token),
      (names) => !names.includes('create_article'),
    );
    const names = await tools(s.token);
    for (const write of ['create_article', 'update_article', 'publish_article', 'configure_agent', 'write_article', 'generate_image', 'cancel_job'])
      expect(names).not.toContain(write);
    expect(names).toContain('list_articles');
    expect(await projects(s.token)).toEqual({ [s.p1]: 'viewer', [s.p2]: 'viewer' });
    // A write tool is gone for the grant: calling it is "Unknown tool".
    expect((await callTool(b, s.token, 'create_article', { title: 'No', project_id: s.p1 })).rpcError).toEqual({
      code: -32602,
      message: 'Unknown tool: create_article',
    });
    // The admin-made grant on the same projects is unaffected.
    expect(await tools(s.adminToken)).toContain('create_article');
  });

  it('a raised project role never widens the grant beyond what was consented', async () => {
    const s = await setUp({ p1: 'viewer' }, 'editor');
    expect(await projects(s.token)).toEqual({ [s.p1]: 'viewer' });
    await put(`/admin/v1/projects/${s.p1}/members/${s.userId}`, { role: 'owner' });
    await soon(
      () => projects(s.token),
      (p) => p[s.p1] === 'editor',
    );
    expect(await tools(s.token)).not.toContain('delete_article');
  });

  it('a removed project membership: the project is gone from list_projects', async () => {
    const s = await setUp({ p1: 'editor', p2: 'viewer' });
    expect(Object.keys(await projects(s.token)).sort()).toEqual([s.p1, s.p2].sort());

    const res = await call(a, 'delete', `/admin/v1/projects/${s.p1}/members/${s.userId}`);
    expect(res.status).toBe(204);
    await soon(
      () => projects(s.token),
      (p) => !(s.p1 in p),
    );
    expect(await projects(s.token)).toEqual({ [s.p2]: 'viewer' });
    // The project is unknown to the grant now.
    expect((await callTool(b, s.token, 'list_articles', { project_id: s.p1 })).rpcError).toEqual({
      code: -32602,
      message: `Unknown project "${s.p1}" for this credential.`,
    });
    expect(Object.keys(await projects(s.adminToken)).sort()).toEqual([s.p1, s.p2].sort());
  });

  it('a removed account membership: the grant still authenticates, with an empty list_projects and no project tools', async () => {
    const s = await setUp({ p1: 'editor', p2: 'editor' });
    expect(Object.keys(await projects(s.token))).toHaveLength(2);

    const res = await call(a, 'delete', `/admin/v1/accounts/${s.accountId}/members/${s.userId}`);
    expect(res.status).toBe(204);
    await soon(
      () => projects(s.token),
      (p) => Object.keys(p).length === 0,
    );
    expect((await rpc(b, s.token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    expect(await tools(s.token)).toEqual(['list_projects']);
    expect(Object.keys(await projects(s.adminToken))).toHaveLength(2);
  });

  it('made account owner: the grant reaches every consented project at its consented role', async () => {
    const s = await setUp({ p1: 'viewer' }, 'owner');
    expect(await projects(s.token)).toEqual({ [s.p1]: 'viewer' });
    expect(await tools(s.token)).not.toContain('delete_article');

    await put(`/admin/v1/accounts/${s.accountId}/members/${s.userId}`, { role: 'owner' });
    await soon(
      () => projects(s.token),
      (p) => Object.keys(p).length === 2,
    );
    expect(await projects(s.token)).toEqual({ [s.p1]: 'owner', [s.p2]: 'owner' });
    expect(await tools(s.token)).toContain('delete_article');

    // And back to member: their project role again.
    await put(`/admin/v1/accounts/${s.accountId}/members/${s.userId}`, { role: 'member' });
    await soon(
      () => projects(s.token),
      (p) => Object.keys(p).length === 1,
    );
    expect(await projects(s.token)).toEqual({ [s.p1]: 'viewer' });
  });

  it('a disabled user: every grant of theirs is 401 (invalid_token); enabled again, they work again', async () => {
    const s = await setUp({ p1: 'editor' });
    const client = await newClient(a, { client_name: 'Claude' });
    const second = await oauthGrant(a, { accountId: s.accountId, userId: s.userId, clientId: client.client_id, projects: withRole([s.p1], 'viewer') });
    const ping = (token: string) => rpc(b, token, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect((await ping(s.token)).status).toBe(200);
    expect((await ping(second.token)).status).toBe(200);

    await admin(a, 'patch', `/admin/v1/users/${s.userId}`, { disabled: true }, 200);
    const refused = await soon(
      () => ping(s.token),
      (res) => res.status === 401,
    );
    const challenge = String(refused.headers['www-authenticate']);
    expect(challenge).toMatch(/^Bearer /);
    // The challenge names the error once the OAuth work adds it (docs/oauth.md#discovery).
    if (challenge.includes('error=')) expect(challenge).toContain('error="invalid_token"');
    expect((await ping(second.token)).status).toBe(401);
    expect((await rpc(a, s.token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
    // Admin-made grants have no person: unaffected.
    expect((await ping(s.adminToken)).status).toBe(200);

    await admin(a, 'patch', `/admin/v1/users/${s.userId}`, { disabled: false }, 200);
    // A refused token is remembered as unknown for up to the cache's 3 s: enabling is not urgent.
    await eventually(
      () => ping(s.token),
      (res) => res.status === 200,
      5_000,
      100,
    );
  });
});
