import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { freePort } from '../../src/common/net.js';
import { loadConfig } from '../../src/config/config.js';
import { TOOL_NAMES } from '../../src/common/tool-names.js';
import { describeWithChromium, launchChromium } from '../support/browser.js';
import { eventually, withClient } from '../support/database.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { addAccountMember, newUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { sdkV1Calls } from './adapters/sdk-v1.js';
import { runSeedFlow, SEED_STEPS } from './seed-flow.js';

// mcp-remote, the stdio proxy local MCP hosts run for a remote server, given only the server's URL:
// it discovers the server, registers, and opens the person's browser at the authorize URL. Its
// browser here is a script (BROWSER) noting the URL, which headless Chromium then opens: the person
// signs in with a login link and consents, the code reaches mcp-remote's loopback callback, and the
// host's initialize and tools/list go through its stdio, then the rest of the seed flow
// (./seed-flow.ts), unpaced. Its config dir is a temp folder.

const PROXY = require.resolve('mcp-remote/dist/proxy.js');

describeWithChromium('mcp-remote by URL, with OAuth in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let home: string;
  let client: Client | undefined;
  let transport: StdioClientTransport | undefined;
  let accountId: string;

  beforeAll(async () => {
    browser = await launchChromium();
    // The server's defaults: the budget of requests per credential included (not the test apps' raised one).
    t = await startTestApp({ RATE_LIMIT_PER_SECOND: '', RATE_LIMIT_MAX_WAIT_MS: '' });
    expect(t.config.rateLimitPerSecond).toBe(loadConfig({}).rateLimitPerSecond);
    home = mkdtempSync(join(tmpdir(), 'reblog-mcp-remote-'));
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('signs in and consents in the browser, then initialize and tools/list go through its stdio', async () => {
    let projectIds: string[];
    ({ accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Bakery' }]));
    const person = await newUser(t);
    await addAccountMember(t, accountId, person.id, 'owner');

    // The "browser" mcp-remote opens (through the `open` package's xdg-open, which honours BROWSER
    // when there is no display): it writes the URL down.
    const opened = join(home, 'opened-urls');
    const opener = join(home, 'browser.sh');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    chmodSync(opener, 0o755);

    const callbackPort = await freePort();
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [PROXY, `${t.baseUrl}/mcp`, String(callbackPort), '--host', '127.0.0.1'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, MCP_REMOTE_CONFIG_DIR: join(home, '.mcp-auth'), BROWSER: opener },
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    client = new Client({ name: 'mcp-remote-host', version: '1.0.0' });
    // initialize waits in mcp-remote until it holds a token.
    const connected = client.connect(transport);
    connected.catch(() => undefined);

    const authorizeUrl = await eventually(
      async () => (existsSync(opened) ? readFileSync(opened, 'utf8').trim().split('\n')[0] : ''),
      (url) => url !== '',
      30_000,
      100,
    ).catch(() => {
      throw new Error(`mcp-remote opened no browser; its log:\n${log.slice(-3000)}`);
    });
    const url = new URL(authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${t.baseUrl}/oauth/authorize`);
    expect(url.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${callbackPort}/oauth/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');

    // In Chromium: the sign-in page (a login link pasted), then the consent page.
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(authorizeUrl);
      const link = await admin(t, 'post', `/admin/v1/users/${person.id}/login-links`, {}, 201);
      await page.locator('input[name="token"]').fill(link.url);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const form = page.locator('form', { has: page.locator('input[name="request_id"]') });
      await form.waitFor({ state: 'attached' });
      await form.locator(`input[name="project"][value="${projectIds[0]}"]`).check();
      for (const scope of ['read', 'write', 'generate']) await form.locator(`input[name="scope"][value="${scope}"]`).check();
      await form.locator('input[name="scope"][value="delete"]').uncheck();
      // Approve: the code goes to mcp-remote's callback, which exchanges it.
      await Promise.all([page.waitForURL((u) => u.origin === `http://127.0.0.1:${callbackPort}`), form.locator('[name="decision"][value="approve"]').click()]);
    } finally {
      await context.close();
    }

    await connected.catch((err: unknown) => {
      throw new Error(`initialize through mcp-remote failed: ${String(err)}; its log:\n${log.slice(-3000)}`);
    });
    expect(client.getServerVersion()).toEqual({ name: 'reblog-mcp', version: '1.0.0' });
    const { tools } = await client.listTools();
    // Every tool of the consented scopes (all but delete_*): the grant is what reached the server.
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES.filter((name) => !name.startsWith('delete_')).sort());

    // A grant of the person, by dynamic registration; and the revision it spoke, as the server recorded it.
    const grants = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200);
    expect(grants.items).toEqual([
      expect.objectContaining({
        source: 'oauth',
        user_id: person.id,
        scopes: ['read', 'write', 'generate'],
        projects: [{ project_id: projectIds[0], role: 'owner' }],
      }),
    ]);
    // (mcp-remote first opens a session of its own, "mcp-remote-fallback-test", to choose its transport.)
    const sessions = await withClient(t.config.databaseUrl!, (c) =>
      c.query('SELECT protocol_version, client_name FROM mcp_sessions WHERE credential_id = $1 AND client_name LIKE $2', [
        grants.items[0].id,
        'mcp-remote-host%',
      ]),
    );
    expect(sessions.rows).toEqual([{ protocol_version: '2025-11-25', client_name: 'mcp-remote-host (via mcp-remote 0.15.1)' }]);
  }, 120_000);

  it('the seed flow goes through it, unpaced', async () => {
    if (!client) throw new Error('An earlier step failed: mcp-remote is not connected.');
    const grants = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants?limit=200`, undefined, 200);
    const steps = await runSeedFlow(sdkV1Calls(client), { projectId: grants.items[0].projects[0].project_id });
    expect(steps).toEqual(SEED_STEPS.map((step) => ({ step, outcome: 'ok' })));
  }, 60_000);
});
