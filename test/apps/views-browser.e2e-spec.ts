import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { ARTIFACTS_DIR, describeWithChromium, launchChromium } from '../support/browser.js';
import { createDatabase } from '../support/database.js';
import { configuredTenant, createTenant, newKey, withRole, type Tenant } from '../support/fixtures.js';
import { connectClient } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The MCP Apps views (docs/protocol.md#mcp-apps-views) in Chromium, as a host renders them: the SDK's
// AppBridge in a test page (test/apps/host/host-page.ts) loads each view, read from the real server, in a
// sandboxed iframe under the CSP its `_meta.ui.csp` asks for; the view's tool calls go through the
// bridge to the test's MCP client (which holds the key) and on to the real /mcp.

const UI_CAPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const ROOT = resolve(__dirname, '..', '..');
/** README.md shows these: they are rewritten with `UPDATE_DOC_IMAGES=1`; other runs keep them as test artifacts. */
const IMAGES = process.env.UPDATE_DOC_IMAGES === '1' ? join(ROOT, 'docs', 'images') : ARTIFACTS_DIR;
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const HOST_STYLES = {
  light: { '--color-background-primary': '#ffffff', '--color-text-primary': '#1a1a19', '--font-sans': 'system-ui, sans-serif' },
  dark: { '--color-background-primary': '#111111', '--color-text-primary': '#f0f0f0', '--font-sans': 'system-ui, sans-serif' },
};

interface Host {
  page: Page;
  /** Every CSP refusal the page or the view reported. */
  refused: string[];
  close(): Promise<void>;
}

describeWithChromium('MCP Apps views in a host', () => {
  let t: TestApp;
  let browser: Browser;
  let hostServer: Server;
  let hostUrl: string;
  let tenant: Tenant;
  let client: Client;
  const clients: Client[] = [];

  beforeAll(async () => {
    const bundle = await build({
      entryPoints: [join(__dirname, 'host', 'host-page.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      logLevel: 'silent',
    });
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test host</title><style>body{margin:0;background:#eee}iframe{display:block;border:0;width:100%;height:200px}</style></head><body><script>${bundle.outputFiles[0].text.replace(/<\/script/gi, '<\\/script')}</script></body></html>`;
    hostServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page));
    await new Promise<void>((ready) => hostServer.listen(0, '127.0.0.1', ready));
    hostUrl = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}/`;
    browser = await launchChromium();
    t = await startTestApp({ SYNC_BUDGET_MS: '30000' });
    tenant = await configuredTenant(t);
    client = await uiClient(tenant.key);
    mkdirSync(IMAGES, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await browser?.close();
    await new Promise((done) => hostServer?.close(done));
    await t?.close();
  });

  async function uiClient(key: string): Promise<Client> {
    const c = await connectClient(t, key, 'reblog-test-host', UI_CAPS as never);
    clients.push(c);
    return c;
  }

  /** A host page whose bridge calls tools with `caller` (the key stays in the test). */
  async function openHost(caller: Client, width = 1280): Promise<Host> {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    await page.exposeFunction('hostCallTool', (params: { name: string; arguments?: Record<string, unknown> }) => caller.callTool(params));
    await page.goto(hostUrl);
    return { page, refused, close: () => page.close() };
  }

  /** Renders the view `uri` for a tool result, as a host does; answers the view's frame. */
  async function mount(
    host: Host,
    uri: string,
    toolInput: Record<string, unknown>,
    toolResult: unknown,
    context: Record<string, unknown> = {},
  ): Promise<Frame> {
    const read = await client.readResource({ uri });
    const content = read.contents[0] as unknown as { text: string; _meta: { ui: { csp: Record<string, string[]> } } };
    const theme = (context.theme as 'light' | 'dark' | undefined) ?? 'light';
    const hostContext = { theme, locale: 'en-GB', displayMode: 'inline', platform: 'web', styles: { variables: HOST_STYLES[theme] }, ...context };
    await host.page.evaluate((m) => (globalThis as any).mountView(m), { html: content.text, csp: content._meta.ui.csp, toolInput, toolResult, hostContext });
    const frame = (await (await host.page.$('#frame'))!.contentFrame())!;
    await frame.evaluate(() => {
      const w = globalThis as any;
      w.refusals = [];
      w.document.addEventListener('securitypolicyviolation', (e: any) => w.refusals.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    return frame;
  }

  async function expectNoRefusal(host: Host, frame: Frame): Promise<void> {
    expect(host.refused).toEqual([]);
    expect(await frame.evaluate(() => (globalThis as any).refusals)).toEqual([]);
  }

  /** axe-core in the view's frame: no serious or critical violation. */
  async function expectAccessible(frame: Frame, label: string): Promise<void> {
    await frame.evaluate(AXE_SOURCE);
    const { passes, violations } = await frame.evaluate(async () => {
      const w = globalThis as any;
      const result = await w.axe.run(w.document);
      return {
        passes: result.passes.length,
        violations: result.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n: any) => n.target.join(' ')) })),
      };
    });
    expect(passes).toBeGreaterThan(5);
    expect([label, violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical')]).toEqual([label, []]);
  }

  /** docs/images/<name>-1280.png and -360.png, with the axe pass at each width. */
  async function screenshots(host: Host, frame: Frame, name: string): Promise<void> {
    for (const width of [1280, 360]) {
      await host.page.setViewportSize({ width, height: 800 });
      // The view tells the host its new height (autoResize): wait until the frame has grown to it.
      await host.page.waitForFunction(() => {
        const w = globalThis as any;
        const iframe = w.document.getElementById('frame');
        return iframe.contentWindow && iframe.getBoundingClientRect().height > 150;
      });
      await host.page.waitForTimeout(300);
      // A viewport as tall as the view: no scroll bar takes width from it while the picture is taken.
      const height = await host.page.evaluate(() => Math.ceil((globalThis as any).document.getElementById('frame').getBoundingClientRect().height));
      await host.page.setViewportSize({ width, height: Math.max(height, 400) });
      await host.page.waitForTimeout(200);
      await host.page.screenshot({ path: join(IMAGES, `${name}-${width}.png`) });
      await expectAccessible(frame, `${name} at ${width}`);
    }
    await host.page.setViewportSize({ width: 1280, height: 800 });
  }

  async function article(id: string, caller = client): Promise<any> {
    return caller.callTool({ name: 'get_article', arguments: { id } });
  }

  it('shows the article from a real get_article result; Publish calls publish_article and the view shows it published', async () => {
    const created = (await client.callTool({
      name: 'create_article',
      arguments: {
        title: 'Baking sourdough at home',
        excerpt: 'A starter, flour, water and patience: the whole method in five steps.',
        tags: ['bread', 'baking'],
        body: '## What you need\n\nA **lively starter**, strong flour and water.\n\n1. Feed the starter\n2. Mix and rest\n3. Fold every half hour\n\n> Patience is the secret ingredient.\n\n<script>alert(1)</script><img src="https://example.com/x.png" onerror="alert(2)">',
      },
    })) as any;
    const id = created.structuredContent.id;
    const image = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'A loaf of sourdough bread', article_id: id } })) as any;
    expect(image.structuredContent.status).toBe('succeeded');
    const result = await article(id);
    expect(result._meta['reblog/featured_image']).toMatch(/^data:image\/png;base64,/);

    const host = await openHost(client);
    try {
      const frame = await mount(host, 'ui://reblog/article', { id }, result);
      await frame.getByRole('heading', { name: 'Baking sourdough at home' }).waitFor();
      expect(await frame.getByText('A starter, flour, water and patience').count()).toBe(1);
      expect(await frame.locator('.badge').first().textContent()).toBe('draft');
      expect(await frame.getByRole('img', { name: /Featured image/ }).getAttribute('src')).toMatch(/^data:image\/png/);
      expect(await frame.getByRole('heading', { name: 'What you need' }).count()).toBe(1);
      // DOMPurify took the script and the handler out; the external image, which the CSP would refuse, is only named.
      expect(await frame.locator('.article-body script, .article-body [onerror], .article-body img').count()).toBe(0);
      expect(await frame.locator('.article-body .image-placeholder').textContent()).toBe('[Image]');
      expect(await frame.getByText(/\d+ words/).count()).toBe(1);
      for (const name of ['Publish', 'Schedule…', 'Edit title and excerpt', 'Generate an image'])
        expect(await frame.getByRole('button', { name }).count()).toBe(1);
      await screenshots(host, frame, 'view-article');

      // Keyboard: Tab reaches Publish, Enter presses it.
      await frame.getByRole('button', { name: 'Publish' }).focus();
      await host.page.keyboard.press('Enter');
      await frame.locator('.badge', { hasText: 'published' }).waitFor();
      expect(await host.page.evaluate(() => (globalThis as any).viewCalls)).toEqual(['publish_article']);
      expect((await article(id)).structuredContent.status).toBe('published');
      // Published: no Publish button any more.
      expect(await frame.getByRole('button', { name: 'Publish' }).count()).toBe(0);

      // Edit title and excerpt: the inline form calls update_article.
      await frame.getByRole('button', { name: 'Edit title and excerpt' }).click();
      await frame.getByLabel('Title', { exact: true }).fill('Sourdough, step by step');
      await frame.getByRole('button', { name: 'Save' }).click();
      await frame.getByRole('heading', { name: 'Sourdough, step by step' }).waitFor();
      expect((await article(id)).structuredContent.title).toBe('Sourdough, step by step');
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('Schedule… and Generate an image call their tools; the view follows', async () => {
    const created = (await client.callTool({ name: 'create_article', arguments: { title: 'Rye bread', body: 'Dense and dark.' } })) as any;
    const id = created.structuredContent.id;
    const host = await openHost(client);
    try {
      const frame = await mount(host, 'ui://reblog/article', { id }, await article(id));
      await frame.getByRole('button', { name: 'Schedule…' }).click();
      await frame.getByLabel('Publish at').fill('2030-01-15T09:30');
      await frame.getByRole('button', { name: 'Schedule', exact: true }).click();
      await frame.locator('.badge', { hasText: 'scheduled' }).waitFor();
      expect(await frame.getByText(/Scheduled for .*2030/).count()).toBe(1);
      expect((await article(id)).structuredContent.status).toBe('scheduled');

      await frame.getByRole('button', { name: 'Generate an image' }).click();
      await frame.getByLabel('Image of').fill('A rye loaf');
      await frame.getByRole('button', { name: 'Generate', exact: true }).click();
      await frame.getByRole('img', { name: /Featured image/ }).waitFor();
      const calls = await host.page.evaluate(() => (globalThis as any).viewCalls);
      expect(calls).toEqual(['publish_article', 'generate_image', 'get_article']);
      expect((await article(id)).structuredContent.featured_image_id).toEqual(expect.any(String));
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('the get_job result of an image job shows the image', async () => {
    const made = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'A baguette' } })) as any;
    expect(made.structuredContent.status).toBe('succeeded');
    const job = await client.callTool({ name: 'get_job', arguments: { job_id: made.structuredContent.job_id } });
    const host = await openHost(client);
    try {
      const frame = await mount(host, 'ui://reblog/article', { job_id: made.structuredContent.job_id }, job);
      await frame.getByRole('heading', { name: 'Image ready' }).waitFor();
      expect(await frame.getByRole('img').getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it("a read-only key's view has no actions", async () => {
    const reader = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'viewer'), ['read']);
    const readerClient = await uiClient(reader.key);
    const created = (await client.callTool({ name: 'create_article', arguments: { title: 'Read only', body: 'Nothing to do here.' } })) as any;
    const host = await openHost(readerClient);
    try {
      const frame = await mount(host, 'ui://reblog/article', {}, await article(created.structuredContent.id, readerClient));
      await frame.getByRole('heading', { name: 'Read only' }).waitFor();
      expect(await frame.getByRole('button').count()).toBe(0);
      expect(await frame.getByRole('group', { name: 'Article actions' }).count()).toBe(0);
      await expectAccessible(frame, 'read-only article');
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('write_article in setup shows the setup form with the proposed answers; saving configures the writer and makes the article', async () => {
    const fresh = await createTenant(t);
    const freshClient = await uiClient(fresh.key);
    const brief = { brief: 'How to keep a sourdough starter alive', title: 'Keeping a starter' };
    const setup = (await freshClient.callTool({ name: 'write_article', arguments: brief })) as any;
    expect(setup.structuredContent.status).toBe('setup_required');
    const host = await openHost(freshClient);
    try {
      const frame = await mount(host, 'ui://reblog/article', brief, setup);
      await frame.getByRole('heading', { name: 'Set up the writer' }).waitFor();
      const questions = setup.structuredContent.questions as { id: string; question: string; proposed_answer: string | null }[];
      for (const q of questions) {
        const field = frame.getByLabel(q.question);
        expect(await field.count()).toBe(1);
        if (q.proposed_answer !== null) expect(await field.inputValue()).toBe(q.proposed_answer);
        else if (q.id !== 'banned_words') await field.fill(q.id === 'topics' ? 'bread, starters, baking' : 'Home bakers');
      }
      await frame.evaluate(() => (globalThis as any).document.activeElement?.blur());
      await screenshots(host, frame, 'view-writer-setup');
      await frame.getByRole('button', { name: 'Save and write the article' }).click();
      await frame.getByRole('heading', { name: 'Keeping a starter' }).waitFor({ timeout: 30_000 });
      const calls: string[] = await host.page.evaluate(() => (globalThis as any).viewCalls);
      expect(calls.slice(0, 2)).toEqual(['configure_agent', 'write_article']);
      const config = (await freshClient.callTool({ name: 'get_agent_config', arguments: {} })) as any;
      expect(config.structuredContent.config.version).toBe(1);
      const list = (await freshClient.callTool({ name: 'list_articles', arguments: {} })) as any;
      expect(list.structuredContent.items.map((a: any) => a.title)).toEqual(['Keeping a starter']);
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('the articles view: a table, a status filter and pages through list_articles; a row opens the article', async () => {
    const shelf = await configuredTenant(t);
    const shelfClient = await uiClient(shelf.key);
    for (let i = 1; i <= 12; i++) {
      await shelfClient.callTool({
        name: 'create_article',
        arguments: { title: `Loaf number ${i}`, excerpt: `Notes on bake ${i}.`, body: `Bake ${i}.`, ...(i % 4 === 0 ? { status: 'published' } : {}) },
      });
    }
    const listed = await shelfClient.callTool({ name: 'list_articles', arguments: { page_size: 10 } });
    const host = await openHost(shelfClient);
    try {
      const frame = await mount(host, 'ui://reblog/articles', { page_size: 10 }, listed);
      await frame.getByRole('heading', { name: 'Articles' }).waitFor();
      expect(await frame.locator('tbody tr').count()).toBe(10);
      await screenshots(host, frame, 'view-articles');
      await frame.getByRole('button', { name: 'Next' }).click();
      await frame.getByText('Page 2 of 2').waitFor();
      expect(await frame.locator('tbody tr').count()).toBe(2);
      await frame.getByLabel('Status').selectOption('published');
      await frame.getByText('Page 1 of 1 · 3 articles').waitFor();
      expect(await frame.locator('tbody tr').count()).toBe(3);
      await frame.getByRole('button', { name: 'Loaf number 8' }).click();
      await frame.getByRole('heading', { name: 'Loaf number 8' }).waitFor();
      await frame.getByRole('button', { name: '← All articles' }).click();
      await frame.getByText('Page 1 of 1 · 3 articles').waitFor();
      expect(await host.page.evaluate(() => (globalThis as any).viewCalls)).toEqual(['list_articles', 'list_articles', 'get_article', 'list_articles']);
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('a job that outlives its call: the view shows its progress through get_job, then the article; an image the same way', async () => {
    // A database of its own, an API instance whose jobs answer "running" at once, and no worker until
    // the test starts one: the job waits, queued, while the view shows it.
    const db = await createDatabase();
    const slowClients: Client[] = [];
    try {
      const api = await db.app({ ROLE: 'api', SYNC_BUDGET_MS: '0' });
      const owner = await configuredTenant(api);
      const slowClient = await connectClient(api, owner.key, 'reblog-test-host', UI_CAPS as never);
      slowClients.push(slowClient);
      const brief = { brief: 'Why bread needs salt', title: 'Salt in bread' };
      const running = (await slowClient.callTool({ name: 'write_article', arguments: brief })) as any;
      expect(running.structuredContent).toMatchObject({ status: 'running', view: { tools: expect.arrayContaining(['get_job']) } });
      const host = await openHost(slowClient);
      try {
        const frame = await mount(host, 'ui://reblog/article', brief, running);
        await frame.getByRole('progressbar').waitFor();
        // The view polls get_job while the job waits.
        await host.page.waitForFunction(() => (globalThis as any).viewCalls.length >= 2);
        expect(new Set(await host.page.evaluate(() => (globalThis as any).viewCalls))).toEqual(new Set(['get_job']));
        await db.app({ ROLE: 'worker' });
        await frame.getByRole('heading', { name: 'Salt in bread' }).waitFor({ timeout: 30_000 });

        const before: number = await host.page.evaluate(() => (globalThis as any).viewCalls.length);
        await frame.getByRole('button', { name: 'Generate an image' }).click();
        await frame.getByRole('button', { name: 'Generate', exact: true }).click();
        await frame.getByRole('img', { name: /Featured image/ }).waitFor({ timeout: 30_000 });
        const after: string[] = await host.page.evaluate(() => (globalThis as any).viewCalls);
        // generate_image answered "running" (no time to wait on this instance): the view followed its job.
        expect(after.slice(before)).toEqual(['generate_image', ...after.slice(before + 1, -1).map(() => 'get_job'), 'get_article']);
        expect(after.slice(before)).toContain('get_job');
        await expectNoRefusal(host, frame);
      } finally {
        await host.close();
      }
    } finally {
      for (const c of slowClients) await c.close().catch(() => undefined);
      await db.drop();
    }
  }, 120_000);

  it("takes the host's theme, CSS variables and locale", async () => {
    const created = (await client.callTool({ name: 'create_article', arguments: { title: 'Dark rye', body: 'Late night baking.' } })) as any;
    const host = await openHost(client, 360);
    try {
      const frame = await mount(host, 'ui://reblog/article', {}, await article(created.structuredContent.id), { theme: 'dark', locale: 'de-DE' });
      await frame.getByRole('heading', { name: 'Dark rye' }).waitFor();
      const look = await frame.evaluate(() => {
        const w = globalThis as any;
        return { theme: w.document.documentElement.getAttribute('data-theme'), background: w.getComputedStyle(w.document.body).backgroundColor };
      });
      expect(look).toEqual({ theme: 'dark', background: 'rgb(17, 17, 17)' });
      // German words and dates: day first, dots between (04.12.2026).
      expect(await frame.locator('.meta').textContent()).toMatch(/Aktualisiert am \d{2}\.\d{2}\.\d{4}/);
      const height = await host.page.evaluate(() => Math.ceil((globalThis as any).document.getElementById('frame').getBoundingClientRect().height));
      await host.page.setViewportSize({ width: 360, height: Math.max(height, 400) });
      await host.page.screenshot({ path: join(IMAGES, 'view-article-dark-360.png') });
      await expectAccessible(frame, 'dark article');
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  /** The view's `<html lang>`, its buttons' names and its article's meta line. */
  async function words(frame: Frame): Promise<{ lang: string; buttons: string[]; badge: string; meta: string }> {
    return frame.evaluate(() => {
      const d = (globalThis as any).document;
      return {
        lang: d.documentElement.lang,
        buttons: Array.from(d.querySelectorAll('button'), (b: any) => b.textContent),
        badge: d.querySelector('.badge').textContent,
        meta: d.querySelector('.meta').textContent,
      };
    });
  }

  it('speaks the host\'s language: fr-FR gives the French labels and <html lang="fr">; the article itself stays as written', async () => {
    const created = (await client.callTool({
      name: 'create_article',
      arguments: { title: 'Pain de campagne, the English notes', excerpt: 'Written in English on purpose.', body: 'One two three.' },
    })) as any;
    const id = created.structuredContent.id;
    const host = await openHost(client);
    try {
      const frame = await mount(host, 'ui://reblog/article', { id }, await article(id), { locale: 'fr-FR' });
      await frame.getByRole('button', { name: 'Publier' }).waitFor();
      expect(await words(frame)).toEqual({
        lang: 'fr',
        buttons: ['Publier', 'Programmer…', 'Modifier le titre et le résumé', 'Générer une image'],
        badge: 'brouillon',
        meta: expect.stringMatching(/^brouillonMis à jour le \d{1,2} [a-zéû.]+ 20\d\d.*3 mots$/),
      });
      expect(await frame.getByRole('group', { name: 'Actions sur l’article' }).count()).toBe(1);
      // Content is data: the title, excerpt and body are shown as written.
      expect(await frame.getByRole('heading', { name: 'Pain de campagne, the English notes' }).count()).toBe(1);
      expect(await frame.getByText('Written in English on purpose.').count()).toBe(1);
      await expectAccessible(frame, 'French article');

      await frame.getByRole('button', { name: 'Publier' }).click();
      await frame.locator('.badge', { hasText: 'publié' }).waitFor();
      expect(await frame.locator('.meta').textContent()).toMatch(/Publié le /);
      expect((await article(id)).structuredContent.status).toBe('published');

      // The host changes its locale: the view shows the same screen in the new language.
      await host.page.evaluate(() => (globalThis as any).setHostContext({ locale: 'ja-JP' }));
      await frame.locator('.badge', { hasText: '公開済み' }).waitFor();
      expect(await words(frame)).toMatchObject({ lang: 'ja', buttons: ['タイトルと抜粋を編集', '画像を生成'] });
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('a locale the views have no words for (xx-YY) falls back to English, dates and numbers included', async () => {
    const created = (await client.callTool({ name: 'create_article', arguments: { title: 'Unknown tongue', body: 'One.' } })) as any;
    const host = await openHost(client);
    try {
      const frame = await mount(host, 'ui://reblog/article', {}, await article(created.structuredContent.id), { locale: 'xx-YY' });
      await frame.getByRole('heading', { name: 'Unknown tongue' }).waitFor();
      expect(await words(frame)).toEqual({
        lang: 'en',
        buttons: ['Publish', 'Schedule…', 'Edit title and excerpt', 'Generate an image'],
        badge: 'draft',
        meta: expect.stringMatching(/^draftUpdated [A-Z][a-z]{2} \d{1,2}, 20\d\d.*1 word$/),
      });
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });

  it('the articles view in Spanish: headings, filter, pager and the count with its plural', async () => {
    const shelf = await configuredTenant(t);
    const shelfClient = await uiClient(shelf.key);
    await shelfClient.callTool({ name: 'create_article', arguments: { title: 'Pan de masa madre', body: 'Uno.' } });
    const host = await openHost(shelfClient);
    try {
      const listed = await shelfClient.callTool({ name: 'list_articles', arguments: {} });
      const frame = await mount(host, 'ui://reblog/articles', {}, listed, { locale: 'es-MX' });
      await frame.getByRole('heading', { name: 'Artículos' }).waitFor();
      expect(await frame.evaluate(() => (globalThis as any).document.documentElement.lang)).toBe('es');
      expect(await frame.getByText('Página 1 de 1 · 1 artículo').count()).toBe(1);
      expect(await frame.getByRole('columnheader').allTextContents()).toEqual(['Título', 'Estado', 'Fecha']);
      expect(await frame.getByLabel('Estado').locator('option').allTextContents()).toEqual(['Todos', 'borrador', 'programado', 'publicado', 'archivado']);
      expect(await frame.getByRole('button', { name: 'Siguiente' }).isDisabled()).toBe(true);
      await expectAccessible(frame, 'Spanish articles');
      await expectNoRefusal(host, frame);
    } finally {
      await host.close();
    }
  });
});
