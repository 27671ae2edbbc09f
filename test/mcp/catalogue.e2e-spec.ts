import { startFixtureApp } from '../support/fixture-app.js';
import { activity, admin, createTenant, MISSING_ID, newAccountWithProjects, newKey, type Role, type Scope } from '../support/fixtures.js';
import { call, connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Ajv } from 'ajv';
import { expectToolError, expectToolResult, portabilityFindings, TOOL_TABLE } from './mcp-e2e-helpers.js';

// docs/protocol.md#the-catalogue: the catalogue is filtered twice, by the grant's scopes and by the projects.
const ROLE_RANK: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };
/**
 * The product's tools as docs/protocol.md#the-tools declares them: every expectation below is
 * measured against this list, never against what the build happened to register.
 */
const DECLARED_TOOLS = [
  'list_projects',
  'list_articles',
  'get_article',
  'create_article',
  'update_article',
  'publish_article',
  'delete_article',
  'configure_agent',
  'get_agent_config',
  'write_article',
  'generate_image',
  'get_job',
  'list_jobs',
  'cancel_job',
];

describe('/mcp catalogue', () => {
  let t: TestApp;
  let f: TestApp;
  /** The catalogue of a key with every scope and the owner role. */
  let registered: string[];
  beforeAll(async () => {
    [t, f] = await Promise.all([startTestApp(), startFixtureApp()]);
    const full = await createTenant(t);
    registered = await names(t, full.key);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), f?.close()]);
  });

  async function list(app: TestApp, key: string): Promise<any[]> {
    const res = await rpc(app, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(200);
    return res.body.result.tools;
  }
  async function names(app: TestApp, key: string): Promise<string[]> {
    return (await list(app, key)).map((x) => x.name);
  }
  /** The declared tools `keep` lets through, in the order of the full catalogue (a declared tool missing from it stays in, and fails the comparison). */
  const expected = (keep: (tool: (typeof TOOL_TABLE)[string]) => boolean) =>
    DECLARED_TOOLS.filter((name) => keep(TOOL_TABLE[name])).sort((x, y) => registered.indexOf(x) - registered.indexOf(y));

  it('a key with every scope and the owner role sees exactly the declared product tools', () => {
    expect([...registered].sort()).toEqual([...DECLARED_TOOLS].sort());
    expect(Object.keys(TOOL_TABLE).sort()).toEqual([...DECLARED_TOOLS].sort());
  });

  describe('filtered by the grant (scopes)', () => {
    it('a read-only key sees only read tools', async () => {
      const tenant = await createTenant(t, { scopes: ['read'] });
      expect(await names(t, tenant.key)).toEqual(expected((x) => x.scope === 'read'));
    });

    it.each<[Scope[]]>([[['write']], [['write', 'generate', 'delete']]])(
      'a key with %j and no read scope sees no read tool; calling one is "Unknown tool"',
      async (scopes) => {
        const tenant = await createTenant(t, { scopes });
        const listed = await names(t, tenant.key);
        expect(listed).toEqual(expected((x) => scopes.includes(x.scope)));
        for (const name of ['list_projects', 'list_articles', 'get_article']) {
          expect(listed).not.toContain(name);
          const res = await rpc(t, tenant.key, call(2, name, name === 'get_article' ? { handle: 'x' } : {}));
          expect(res.status).toBe(200);
          expect(res.body).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: `Unknown tool: ${name}` } });
        }
      },
    );
  });

  describe('filtered by the projects (role, disabled_tools)', () => {
    it.each<[Role]>([['viewer'], ['editor'], ['owner']])('the catalogue of a key with the %s role has only the tools that role may run', async (role) => {
      const tenant = await createTenant(t, { role });
      const listed = await names(t, tenant.key);
      expect(listed).toEqual(expected((x) => ROLE_RANK[x.role] <= ROLE_RANK[role]));
      // A viewer's catalogue has no writing tool at all.
      if (role === 'viewer') for (const name of listed) expect(TOOL_TABLE[name].scope).toBe('read');
    });

    it('an owner-only tool is hidden from a viewer and an editor, and calling it is "Unknown tool"', async () => {
      for (const role of ['viewer', 'editor'] as const) {
        const tenant = await createTenant(t, { role });
        expect(await names(f, tenant.key)).not.toContain('test_e2e_owner_only');
        const res = await rpc(f, tenant.key, call(3, 'test_e2e_owner_only', {}));
        expect(res.body.error).toEqual({ code: -32602, message: 'Unknown tool: test_e2e_owner_only' });
      }
      const owner = await createTenant(t, { role: 'owner' });
      expect(await names(f, owner.key)).toContain('test_e2e_owner_only');
    });

    it('a tool disabled in the only project is not listed, and calling it is -32602 "Unknown tool: <name>"', async () => {
      const tenant = await createTenant(t, { disabledTools: ['list_articles'] });
      const listed = await names(t, tenant.key);
      expect(listed).not.toContain('list_articles');
      expect(listed).toEqual(expect.arrayContaining(['list_projects', 'get_article']));
      const res = await rpc(t, tenant.key, call(4, 'list_articles', {}));
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Unknown tool: list_articles' } });
      const client = await connectClient(t, tenant.key);
      expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('list_articles');
      await expect(client.callTool({ name: 'list_articles', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      await client.close();
    });

    it('a tool disabled in one of two projects is listed; on that project it is a tool error naming where it can run', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [
        { name: 'Locked', disabled_tools: ['get_article', 'list_articles'] },
        { name: 'Open' },
      ]);
      const [locked, open] = projectIds;
      const { key } = await newKey(t, accountId, [
        { project_id: locked, role: 'owner' },
        { project_id: open, role: 'owner' },
      ]);
      const tools = await list(t, key);
      const listArticles = tools.find((x) => x.name === 'list_articles');
      expect(listArticles.inputSchema.required).toContain('project_id');

      const refused = await rpc(t, key, call(5, 'list_articles', { project_id: locked }));
      expect(refused.status).toBe(200);
      const error = expectToolError(refused.body.result, 'forbidden');
      expect(error.message).toContain('disabled');
      expect(error.message).toContain('Locked');
      expect(error.message).toContain(open);
      expect(error.message).not.toContain(locked);

      const allowed = await rpc(t, key, call(6, 'list_articles', { project_id: open }));
      expect(expectToolResult(allowed.body.result).pagination.total).toBe(0);

      const entries = await activity(t, accountId, 'outcome=denied');
      expect(entries).toEqual([expect.objectContaining({ method: 'tools/call', tool: 'list_articles', project_id: locked, outcome: 'denied' })]);
    });

    it('a tool called on a project where the role is too low is a tool error naming the projects where it can run', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Mine' }, { name: 'Theirs' }, { name: 'Also mine' }]);
      const [mine, theirs, alsoMine] = projectIds;
      const { key } = await newKey(t, accountId, [
        { project_id: mine, role: 'owner' },
        { project_id: theirs, role: 'viewer' },
        { project_id: alsoMine, role: 'owner' },
      ]);
      expect(await names(f, key)).toContain('test_e2e_owner_only');
      const client = await connectClient(f, key);
      const error = expectToolError(await client.callTool({ name: 'test_e2e_owner_only', arguments: { project_id: theirs } }), 'forbidden');
      expect(error.message).toContain('viewer');
      expect(error.message).toContain('owner');
      expect(error.message).toContain(mine);
      expect(error.message).toContain(alsoMine);
      expect(error.message).not.toContain(theirs);
      const ok = expectToolResult(await client.callTool({ name: 'test_e2e_owner_only', arguments: { project_id: alsoMine } }));
      expect(ok.project_id).toBe(alsoMine);
      await client.close();
    });

    it('delete_article needs the owner role and the delete scope', async () => {
      const editor = await createTenant(t, { role: 'editor' });
      expect(await names(t, editor.key)).not.toContain('delete_article');
      const noScope = await createTenant(t, { scopes: ['read', 'write'] });
      expect(await names(t, noScope.key)).not.toContain('delete_article');
      // Owner in one project, editor in another: listed, and refused where the role is too low, before the article is looked up.
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Owned' }, { name: 'Edited' }]);
      const { key } = await newKey(t, accountId, [
        { project_id: projectIds[0], role: 'owner' },
        { project_id: projectIds[1], role: 'editor' },
      ]);
      expect(await names(t, key)).toContain('delete_article');
      const res = await rpc(t, key, call(7, 'delete_article', { project_id: projectIds[1], id: MISSING_ID }));
      const error = expectToolError(res.body.result, 'forbidden');
      expect(error.message).toContain(projectIds[0]);
      expect(error.message).not.toContain(projectIds[1]);
    });

    it('the catalogue follows a change of disabled_tools at once', async () => {
      const tenant = await createTenant(t);
      expect(await names(t, tenant.key)).toContain('get_article');
      await admin(t, 'patch', `/admin/v1/projects/${tenant.projectIds[0]}`, { disabled_tools: ['get_article'] }, 200);
      expect(await names(t, tenant.key)).not.toContain('get_article');
      await admin(t, 'patch', `/admin/v1/projects/${tenant.projectIds[0]}`, { disabled_tools: [] }, 200);
      expect(await names(t, tenant.key)).toContain('get_article');
    });
  });

  describe('what each listed tool carries', () => {
    it('annotations from the verb: readOnlyHint on list_/get_, destructiveHint on delete_, false on other writers', async () => {
      const tenant = await createTenant(t);
      for (const tool of await list(t, tenant.key)) {
        const verb = tool.name.split('_')[0];
        if (verb === 'list' || verb === 'get') {
          expect(tool.annotations).toEqual(expect.objectContaining({ readOnlyHint: true }));
          expect(tool.annotations.destructiveHint).toBeUndefined();
        } else if (verb === 'delete') {
          expect(tool.annotations).toEqual(expect.objectContaining({ destructiveHint: true }));
          expect(tool.annotations.readOnlyHint).not.toBe(true);
        } else {
          expect(tool.annotations).toEqual(expect.objectContaining({ destructiveHint: false }));
          expect(tool.annotations.readOnlyHint).not.toBe(true);
        }
      }
    });

    it('every inputSchema is a closed object; outputSchema is given for the read tools', async () => {
      const tenant = await createTenant(t);
      for (const tool of await list(t, tenant.key)) {
        expect(tool.inputSchema).toEqual(expect.objectContaining({ type: 'object', additionalProperties: false, properties: expect.any(Object) }));
        expect(tool.inputSchema.properties).not.toHaveProperty('project_id');
      }
      const tools = await list(t, tenant.key);
      for (const name of ['list_projects', 'list_articles', 'get_article']) {
        expect(tools.find((x) => x.name === name).outputSchema).toEqual(expect.objectContaining({ type: 'object' }));
      }
    });

    it("every inputSchema and outputSchema is portable (what the MCP Inspector --strict checks: no type array, no node that constrains nothing, no remote $ref) and compiles under Ajv's strict mode without a warning", async () => {
      const warnings: string[] = [];
      const ajv = new Ajv({
        strict: true,
        logger: { log: () => undefined, warn: (...m: unknown[]) => warnings.push(m.join(' ')), error: (...m: unknown[]) => warnings.push(m.join(' ')) },
      });
      ajv.addFormat('date-time', true);
      for (const projects of [1, 2]) {
        const tenant = await createTenant(t, { projects });
        for (const tool of await list(t, tenant.key)) {
          for (const kind of ['inputSchema', 'outputSchema'] as const) {
            if (!tool[kind]) continue;
            expect({ tool: tool.name, kind, findings: portabilityFindings(tool[kind]) }).toEqual({ tool: tool.name, kind, findings: [] });
            ajv.compile(tool[kind]);
          }
        }
      }
      expect(warnings).toEqual([]);
    });

    it('with several projects, every project-scoped tool has a required project_id described as documented', async () => {
      const tenant = await createTenant(t, { projects: 2 });
      for (const tool of await list(t, tenant.key)) {
        if (!TOOL_TABLE[tool.name].projectScoped) {
          expect(tool.inputSchema.properties).not.toHaveProperty('project_id');
          continue;
        }
        expect(tool.inputSchema.properties.project_id).toEqual({ type: 'string', description: 'Id of the project to act on; see list_projects' });
        expect(tool.inputSchema.required).toContain('project_id');
        expect(tool.inputSchema.additionalProperties).toBe(false);
      }
    });
  });
});
