import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTenant, newKey, newAccountWithProjects, withRole, type Tenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders, toolJson } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ask } from '../support/wire2026.js';

// MCP Apps views (docs/protocol.md#mcp-apps-views): offered only to clients that declare the
// io.modelcontextprotocol/ui extension (2025: initialize's capabilities; 2026-07-28: each request's
// _meta); every other client gets, byte for byte, what it got before the views existed.

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const UI_CAPS = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const LINKED: Record<string, string> = {
  get_article: 'ui://reblog/article',
  create_article: 'ui://reblog/article',
  update_article: 'ui://reblog/article',
  write_article: 'ui://reblog/article',
  get_job: 'ui://reblog/article',
  list_articles: 'ui://reblog/articles',
};

/**
 * The answers of a client without the extension, as the server gave them before the views existed
 * (recorded from that code with UPDATE_VIEWS_SNAPSHOT=1): raw response text, the run's ids and times
 * replaced by placeholders.
 */
const SNAPSHOT = join(__dirname, 'without-views.snapshot.json');

describe('MCP Apps views: who is offered them', () => {
  let t: TestApp;
  let tenant: Tenant;
  let articleId: string;

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    const created = await ask(t, tenant.key, 'tools/call', {
      name: 'create_article',
      arguments: { title: 'Sourdough basics', body: '# Starter\n\nFlour and water.', tags: ['bread'] },
    });
    articleId = toolJson(created.result).id;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  /** The run's ids and times as placeholders, so that the text can be compared across runs. */
  function normalise(text: string): string {
    return text
      .replaceAll(articleId, '<article>')
      .replaceAll(tenant.projectIds[0], '<project>')
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>')
      .replace(/"version":"\d+\.\d+\.\d+"/g, '"version":"<v>"');
  }

  it('a client without the extension gets byte for byte the catalogue, resources and results of before (2025 and 2026-07-28)', async () => {
    const { sessionId } = await initSession(t, tenant.key);
    const legacy = (body: object) => rpc(t, tenant.key, body, sessionHeaders(sessionId)).then((res) => normalise(res.text));
    const modern = async (method: string, params: Record<string, unknown>) => {
      const answer = await ask(t, tenant.key, method, params);
      return normalise(JSON.stringify(answer.body));
    };
    const seen = {
      legacyToolsList: await legacy({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      legacyGetArticle: await legacy({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_article', arguments: { id: articleId } } }),
      legacyResourcesList: await legacy({ jsonrpc: '2.0', id: 4, method: 'resources/list' }),
      legacyReadView: await legacy({ jsonrpc: '2.0', id: 5, method: 'resources/read', params: { uri: 'ui://reblog/article' } }),
      modernToolsList: await modern('tools/list', {}),
      modernGetArticle: await modern('tools/call', { name: 'get_article', arguments: { id: articleId } }),
    };
    if (process.env.UPDATE_VIEWS_SNAPSHOT === '1' || !existsSync(SNAPSHOT)) writeFileSync(SNAPSHOT, JSON.stringify(seen, null, 2) + '\n');
    expect(seen).toEqual(JSON.parse(readFileSync(SNAPSHOT, 'utf8')));
  });

  it('a 2025 client declaring the extension (the SDK client) sees each linked tool name its view, and reads the views', async () => {
    let client: Client | undefined;
    try {
      client = await connectClient(t, tenant.key, 'apps-host', UI_CAPS as never);
      const { tools } = await client.listTools();
      for (const tool of tools) {
        const uri = LINKED[tool.name];
        expect([tool.name, tool._meta]).toEqual([tool.name, uri ? { ui: { resourceUri: uri }, 'ui/resourceUri': uri } : undefined]);
      }
      const resources = [];
      let cursor: string | undefined;
      do {
        const page = await client.listResources(cursor === undefined ? {} : { cursor });
        resources.push(...page.resources);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      const views = resources.filter((r) => r.uri.startsWith('ui://'));
      expect(views.map((r) => [r.uri, r.mimeType])).toEqual([
        ['ui://reblog/article', MIME],
        ['ui://reblog/articles', MIME],
      ]);
      // The articles are still listed after the views.
      expect(resources.some((r) => r.uri.startsWith('reblog://'))).toBe(true);
      for (const uri of ['ui://reblog/article', 'ui://reblog/articles']) {
        const { contents } = await client.readResource({ uri });
        expect(contents).toHaveLength(1);
        const [view] = contents as { uri: string; mimeType: string; text: string; _meta: any }[];
        expect([view.uri, view.mimeType]).toEqual([uri, MIME]);
        // Self-contained: inline script and style, nothing loaded from anywhere.
        expect(view.text).toMatch(/^<!doctype html>/);
        expect(view.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=|<img[^>]+src=["']?http/i);
        expect(view._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [] });
      }

      // The result keeps its text block; structuredContent adds what the view needs.
      const result = (await client.callTool({ name: 'get_article', arguments: { id: articleId } })) as any;
      expect(result.content).toHaveLength(1);
      const text = JSON.parse(result.content[0].text);
      expect(text.view).toBeUndefined();
      const { view, ...article } = result.structuredContent;
      expect(article).toEqual(text);
      expect(view.project).toEqual({ id: tenant.projectIds[0], name: expect.any(String) });
      expect(view.tools).toEqual([
        'get_article',
        'list_articles',
        'update_article',
        'publish_article',
        'generate_image',
        'get_job',
        'write_article',
        'configure_agent',
      ]);
    } finally {
      await client?.close();
    }
  });

  it("the view's tools are the catalogue's: a read-only key's view offers no action", async () => {
    const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Readers' }, { name: 'No images', disabled_tools: ['generate_image'] }]);
    const reader = await newKey(t, accountId, withRole(projectIds, 'viewer'), ['read']);
    const editor = await newKey(t, accountId, withRole(projectIds, 'editor'), ['read', 'write', 'generate']);
    const created = await ask(t, editor.key, 'tools/call', { name: 'create_article', arguments: { project_id: projectIds[1], title: 'T', body: 'B' } });
    const id = toolJson(created.result).id;
    const view = async (key: string) =>
      (await ask(t, key, 'tools/call', { name: 'get_article', arguments: { project_id: projectIds[1], id } }, UI_CAPS)).result.structuredContent.view.tools;
    expect(await view(reader.key)).toEqual(['get_article', 'list_articles', 'get_job']);
    // generate_image is disabled in that project: the view does not offer it.
    expect(await view(editor.key)).toEqual([
      'get_article',
      'list_articles',
      'update_article',
      'publish_article',
      'get_job',
      'write_article',
      'configure_agent',
    ]);
  });

  it('2026-07-28: each request declares it in its own _meta (a request without it sees no view)', async () => {
    const withViews = await ask(t, tenant.key, 'tools/list', {}, UI_CAPS);
    expect(withViews.result.tools.find((x: any) => x.name === 'list_articles')._meta.ui.resourceUri).toBe('ui://reblog/articles');
    const without = await ask(t, tenant.key, 'tools/list', {});
    expect(without.result.tools.some((x: any) => x._meta?.ui)).toBe(false);
    // A client that renders other MIME types only is not offered ours.
    const other = await ask(t, tenant.key, 'tools/list', {}, { extensions: { [UI]: { mimeTypes: ['text/uri-list'] } } });
    expect(other.result.tools.some((x: any) => x._meta?.ui)).toBe(false);
    const read = await ask(t, tenant.key, 'resources/read', { uri: 'ui://reblog/article' }, UI_CAPS);
    expect(read.result.contents[0].mimeType).toBe(MIME);
  });
});
