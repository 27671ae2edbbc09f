import { createTenant, MISSING_ID, newAccountWithProjects, newKey } from '../support/fixtures.js';
import { call, connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectToolError, expectToolResult, seedArticle, TOOL_TABLE } from './mcp-e2e-helpers.js';

// docs/protocol.md#choosing-the-project.
const unknownProject = (id: string) => `Unknown project "${id}" for this credential.`;

describe('/mcp project routing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  async function listed(key: string): Promise<Map<string, any>> {
    const res = await rpc(t, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    return new Map(res.body.result.tools.map((x: any) => [x.name, x]));
  }

  describe('one reachable project', () => {
    it('is inferred: project_id is optional and in no listed schema', async () => {
      const tenant = await createTenant(t);
      await seedArticle(t, tenant.accountId, tenant.projectIds[0], { title: 'Only one' });
      for (const tool of (await listed(tenant.key)).values()) {
        expect(tool.inputSchema.properties).not.toHaveProperty('project_id');
        expect(tool.inputSchema.required ?? []).not.toContain('project_id');
      }
      const client = await connectClient(t, tenant.key);
      const value = expectToolResult(await client.callTool({ name: 'list_articles', arguments: {} }));
      expect(value.items.map((a: any) => a.title)).toEqual(['Only one']);
      await client.close();
    });

    it('its own id may still be given', async () => {
      const tenant = await createTenant(t);
      const res = await rpc(t, tenant.key, call(2, 'list_articles', { project_id: tenant.projectIds[0] }));
      expect(expectToolResult(res.body.result).pagination.total).toBe(0);
    });

    it('another id is refused with -32602 naming it', async () => {
      const tenant = await createTenant(t);
      const other = await createTenant(t);
      const res = await rpc(t, tenant.key, call(3, 'list_articles', { project_id: other.projectIds[0] }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32602, message: unknownProject(other.projectIds[0]) } });
    });
  });

  describe('several reachable projects', () => {
    it('every project-scoped tool gains a required project_id string; the others do not', async () => {
      const tenant = await createTenant(t, { projects: 2 });
      const tools = await listed(tenant.key);
      expect(tools.size).toBeGreaterThanOrEqual(3);
      for (const [name, tool] of tools) {
        if (TOOL_TABLE[name].projectScoped) {
          expect(tool.inputSchema.properties.project_id).toEqual({ type: 'string', description: 'Id of the project to act on; see list_projects' });
          expect(tool.inputSchema.required).toContain('project_id');
        } else {
          expect(tool.inputSchema.properties).not.toHaveProperty('project_id');
          expect(tool.inputSchema.required ?? []).not.toContain('project_id');
        }
        expect(tool.inputSchema.additionalProperties).toBe(false);
      }
      // The tool's own required arguments are kept beside project_id.
      expect(tools.get('list_articles').inputSchema.properties.page_size).toEqual(expect.objectContaining({ maximum: 100 }));
    });

    it.each([2, 3])('a call without project_id is -32602 "project_id is required" naming the count (%i projects)', async (n) => {
      const tenant = await createTenant(t, { projects: n });
      for (const name of ['list_articles', 'get_article']) {
        const res = await rpc(t, tenant.key, call(4, name, name === 'get_article' ? { handle: 'x' } : {}));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          jsonrpc: '2.0',
          id: 4,
          error: { code: -32602, message: `project_id is required: this credential reaches ${n} projects; call list_projects` },
        });
      }
    });

    it('the SDK client gets the same -32602', async () => {
      const tenant = await createTenant(t, { projects: 2 });
      const client = await connectClient(t, tenant.key);
      await expect(client.callTool({ name: 'list_articles', arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('project_id is required: this credential reaches 2 projects; call list_projects'),
      });
      await client.close();
    });

    it('project_id selects the project the tool acts on', async () => {
      const tenant = await createTenant(t, { projects: 2 });
      const [a, b] = tenant.projectIds;
      const inA = await seedArticle(t, tenant.accountId, a, { title: 'In A' });
      await seedArticle(t, tenant.accountId, b, { title: 'In B' });
      const client = await connectClient(t, tenant.key);
      const listA = expectToolResult(await client.callTool({ name: 'list_articles', arguments: { project_id: a } }));
      expect(listA.items.map((x: any) => x.title)).toEqual(['In A']);
      const listB = expectToolResult(await client.callTool({ name: 'list_articles', arguments: { project_id: b } }));
      expect(listB.items.map((x: any) => x.title)).toEqual(['In B']);
      const got = expectToolResult(await client.callTool({ name: 'get_article', arguments: { project_id: a, id: inA.id } }));
      expect(got.project_id).toBe(a);
      // The article is in A; asking for it in B finds nothing.
      expectToolError(await client.callTool({ name: 'get_article', arguments: { project_id: b, id: inA.id } }), 'not_found');
      await client.close();
    });
  });

  describe('an id outside the grant is -32602 naming the id', () => {
    it('a project of the same account that the key does not reach', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{}, {}, {}]);
      const { key } = await newKey(t, accountId, [
        { project_id: projectIds[0], role: 'owner' },
        { project_id: projectIds[1], role: 'owner' },
      ]);
      await seedArticle(t, accountId, projectIds[2], { title: 'Out of reach' });
      const res = await rpc(t, key, call(5, 'list_articles', { project_id: projectIds[2] }));
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32602, message: unknownProject(projectIds[2]) } });
    });

    it("another account's project, a well-formed unknown UUID, a non-UUID, an empty string, a number", async () => {
      const tenant = await createTenant(t, { projects: 2 });
      const other = await createTenant(t);
      const cases: [unknown, string][] = [
        [other.projectIds[0], other.projectIds[0]],
        [MISSING_ID, MISSING_ID],
        ['7906b84e', '7906b84e'],
        ["' OR 1=1 --", "' OR 1=1 --"],
        ['', ''],
        [42, '42'],
      ];
      for (const [given, named] of cases) {
        const res = await rpc(t, tenant.key, call('r', 'list_articles', { project_id: given }));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ jsonrpc: '2.0', id: 'r', error: { code: -32602, message: unknownProject(named) } });
      }
    });

    it('a project_id that is an object or an array is refused by the argument guard', async () => {
      const tenant = await createTenant(t, { projects: 2 });
      for (const given of [{ $ne: null }, [tenant.projectIds[0]]]) {
        const res = await rpc(t, tenant.key, call(6, 'list_articles', { project_id: given }));
        expect(res.body.error).toEqual({ code: -32602, message: 'Invalid value for "project_id": expected a string.' });
      }
    });
  });

  describe('a tool that is not project-scoped (list_projects)', () => {
    it('checks a given project_id and then ignores it', async () => {
      const tenant = await createTenant(t, { projects: 2 });
      const other = await createTenant(t);
      const ok = await rpc(t, tenant.key, call(7, 'list_projects', { project_id: tenant.projectIds[1] }));
      const items = expectToolResult(ok.body.result).items;
      expect(items.map((p: any) => p.id).sort()).toEqual([...tenant.projectIds].sort());
      const refused = await rpc(t, tenant.key, call(8, 'list_projects', { project_id: other.projectIds[0] }));
      expect(refused.body).toEqual({ jsonrpc: '2.0', id: 8, error: { code: -32602, message: unknownProject(other.projectIds[0]) } });
      const bad = await rpc(t, tenant.key, call(9, 'list_projects', { project_id: 'nope' }));
      expect(bad.body.error).toEqual({ code: -32602, message: unknownProject('nope') });
    });

    it('needs no project_id with several projects', async () => {
      const tenant = await createTenant(t, { projects: 3 });
      const client = await connectClient(t, tenant.key);
      expect(expectToolResult(await client.callTool({ name: 'list_projects', arguments: {} })).items).toHaveLength(3);
      await client.close();
    });
  });
});
