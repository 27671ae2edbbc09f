import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../src/common/net.js';
import { createDatabase, type TestDatabase } from '../support/database.js';
import { activity, admin, newKey, withRole } from '../support/fixtures.js';
import type { ServerProcess } from '../support/server-process.js';
import { describeRun, hostEnv, installedVersion, isolatedHome, killHosts, runHost, StdioRpc, type HostRun } from './host-process.js';

/**
 * The MCP hosts people connect to the server, installed as dev dependencies and run as they are
 * shipped, against the built server's first start (a database of its own, so the demo tenant is
 * created and the `claude mcp add` line printed), with the default settings (the rate limit
 * above all). Each host gets a HOME of its own, nothing of the test run's environment, its
 * telemetry and update checks off and, where it would talk to a model, a model URL on a closed
 * loopback port: nothing leaves the machine, and no model is needed. See README.md#hosts-tested.
 */

const CLAUDE_VERSION = installedVersion('@anthropic-ai/claude-code');
const GEMINI_VERSION = installedVersion('@google/gemini-cli');
const CODEX_VERSION = installedVersion('@openai/codex');

/** Claude Code without its update checks, telemetry, error reports and other traffic that is not the MCP server's. */
const CLAUDE_ENV = { DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1' };

type Entry = { id: string; credential: { id: string }; client: { name: string; version: string } | null; method: string; outcome: string; error: unknown };

describe('hosts: Claude Code, Gemini CLI and Codex connect to the server', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let mcpUrl: string;
  /** The `claude mcp add ...` line the first start printed. */
  let claudeLine: string;
  let accountId: string;
  let projectId: string;
  /** The demo key, the one in the printed line. */
  let demoKey: { key: string; id: string };

  beforeAll(async () => {
    db = await createDatabase();
    server = await db.server({ SEED_DEMO: 'true' });
    mcpUrl = `${server.baseUrl}/mcp`;
    [, claudeLine] = await server.waitFor(/^Connect Claude Code: (claude mcp add .+)$/m);
    const [, demoSecret] = await server.waitFor(/API key \(shown once\): (rbk_\S+)/);
    const users = await admin(server, 'get', '/admin/v1/users', undefined, 200);
    const owner = users.items.find((u: { email: string }) => u.email === 'owner@demo.test');
    accountId = (await admin(server, 'get', `/admin/v1/users/${owner.id}`, undefined, 200)).accounts[0].account_id;
    projectId = (await admin(server, 'get', `/admin/v1/accounts/${accountId}/projects`, undefined, 200)).items[0].id;
    const keys = await admin(server, 'get', `/admin/v1/accounts/${accountId}/api-keys`, undefined, 200);
    demoKey = { key: demoSecret, id: keys.items.find((k: { key_prefix: string }) => demoSecret.startsWith(k.key_prefix)).id };
  }, 180_000);

  afterAll(async () => {
    await killHosts();
    await db?.drop();
  });

  /**
   * A key of the demo account for one test, so that the requests of one test never count against
   * the rate limit of the next (each test checks that none of its own is refused).
   */
  function keyFor(name: string): Promise<{ key: string; id: string }> {
    return newKey(server, accountId, withRole([projectId], 'owner'), undefined, name);
  }

  /** The activity entries of one credential, oldest first. */
  async function entriesOf(keyId: string): Promise<Entry[]> {
    const all: Entry[] = await activity(server, accountId);
    return all.filter((e) => e.credential.id === keyId).reverse();
  }

  /** Every entry was answered (none refused, by the rate limit or otherwise) and names `client`, a session's end (DELETE) too. */
  function expectAllAnsweredFrom(entries: Entry[], client: { name: string; version: string }) {
    expect(entries.filter((e) => e.outcome !== 'ok')).toEqual([]);
    expect(entries.filter((e) => e.client?.name !== client.name || e.client?.version !== client.version)).toEqual([]);
  }

  /** The run ended with exit 0 and printed `text`; else a failure showing all it printed. */
  function expectPrinted(run: HostRun, text: string) {
    if (run.code !== 0 || !(run.stdout + run.stderr).includes(text)) throw new Error(`Expected exit 0 and ${JSON.stringify(text)}; got ${describeRun(run)}`);
  }

  describe('Claude Code', () => {
    /**
     * A HOME where the `claude mcp add` line the first start printed was run (as a person pastes it
     * into a shell), with `key` in place of the demo key when given.
     */
    async function claudeHome(key: { key: string } = demoKey): Promise<string> {
      const home = isolatedHome('claude');
      const add = await runHost('/bin/sh', ['-c', claudeLine.replace(demoKey.key, key.key)], { env: hostEnv(home, CLAUDE_ENV), cwd: home });
      expectPrinted(add, `Added HTTP MCP server reblog with URL: ${mcpUrl}`);
      return home;
    }
    const list = (home: string) => runHost('claude', ['mcp', 'list'], { env: hostEnv(home, CLAUDE_ENV), cwd: home });

    it(`${CLAUDE_VERSION}: the exact line the first start prints adds the server, and \`claude mcp list\` reports it connected (as claude-code)`, async () => {
      expect(claudeLine).toBe(`claude mcp add --transport http reblog ${mcpUrl} --header "Authorization: Bearer ${demoKey.key}"`);
      const home = await claudeHome();
      expectPrinted(await list(home), `reblog: ${mcpUrl} (HTTP) - ✔ Connected`);

      const entries = await entriesOf(demoKey.id);
      expect(entries.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
      expectAllAnsweredFrom(entries, { name: 'claude-code', version: CLAUDE_VERSION });
    }, 120_000);

    it('two `claude mcp list` at once, on one key: both connect, and none of their requests is refused', async () => {
      const key = await keyFor('Claude Code, two lists');
      const home = await claudeHome(key);
      const runs = await Promise.all([list(home), list(home)]);
      for (const run of runs) expectPrinted(run, `reblog: ${mcpUrl} (HTTP) - ✔ Connected`);
      const entries = await entriesOf(key.id);
      expect(entries.filter((e) => e.method === 'initialize')).toHaveLength(2);
      expectAllAnsweredFrom(entries, { name: 'claude-code', version: CLAUDE_VERSION });
    }, 120_000);

    it('two Claude Code sessions starting at once on one key: both connect with every tool, and none of their requests is refused', async () => {
      const key = await keyFor('Claude Code, two sessions');
      const home = await claudeHome(key);
      // A session in print mode reports its MCP servers and tools in its first event, before it asks
      // the model (here a closed loopback port): the run ends on that event.
      const env = hostEnv(home, {
        ...CLAUDE_ENV,
        ANTHROPIC_API_KEY: 'no-model-in-this-test',
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${await freePort()}`,
        CLAUDE_CODE_MAX_RETRIES: '0',
      });
      // The init event: a whole line (one JSON object a line) of type system, subtype init.
      const initEvent = (stdout: string) =>
        stdout
          .slice(0, stdout.lastIndexOf('\n'))
          .split('\n')
          .find((line) => line.includes('"subtype":"init"'));
      const session = () =>
        runHost('claude', ['-p', 'List my projects.', '--output-format', 'stream-json', '--verbose'], {
          env,
          cwd: home,
          until: (out) => initEvent(out) !== undefined,
        });
      const runs = await Promise.all([session(), session()]);
      const inits = runs.map((run) => {
        const line = initEvent(run.stdout);
        if (!line) throw new Error(`A session printed no init event: ${describeRun(run)}`);
        return JSON.parse(line) as { mcp_servers: { name: string; status: string }[]; tools: string[] };
      });
      for (const init of inits) {
        expect(init.mcp_servers).toEqual([{ name: 'reblog', status: 'connected' }]);
        expect(init.tools).toEqual(expect.arrayContaining(['mcp__reblog__list_projects', 'mcp__reblog__list_articles', 'mcp__reblog__get_article']));
      }
      expect(inits[1].tools.filter((t) => t.startsWith('mcp__reblog__')).sort()).toEqual(inits[0].tools.filter((t) => t.startsWith('mcp__reblog__')).sort());
      const entries = await entriesOf(key.id);
      expect(entries.filter((e) => e.method === 'initialize')).toHaveLength(2);
      expectAllAnsweredFrom(entries, { name: 'claude-code', version: CLAUDE_VERSION });
    }, 120_000);
  });

  describe('Gemini CLI', () => {
    /** No usage statistics, telemetry or update checks; the HOME folder trusted (else it leaves MCP servers out). */
    const geminiEnv = (home: string) => hostEnv(home, { GEMINI_TELEMETRY_ENABLED: 'false', GEMINI_CLI_TRUST_WORKSPACE: 'true' });

    /** A HOME where `gemini mcp add` added the server with `key`. */
    async function geminiHome(key: { key: string }): Promise<string> {
      const home = isolatedHome('gemini');
      mkdirSync(join(home, '.gemini'));
      writeFileSync(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({
          general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
        }),
      );
      const add = await runHost(
        'gemini',
        ['mcp', 'add', '--scope', 'user', '--transport', 'http', 'reblog', mcpUrl, '--header', `Authorization: Bearer ${key.key}`],
        {
          env: geminiEnv(home),
          cwd: home,
        },
      );
      expectPrinted(add, 'MCP server "reblog" added to user settings. (http)');
      return home;
    }

    it(`${GEMINI_VERSION}: \`gemini mcp add\` adds the server, and \`gemini mcp list\` reports it connected (as mcp-test-client)`, async () => {
      const key = await keyFor('Gemini CLI');
      const home = await geminiHome(key);
      expectPrinted(await runHost('gemini', ['mcp', 'list'], { env: geminiEnv(home), cwd: home }), `✓ reblog: ${mcpUrl} (http) - Connected`);

      // `gemini mcp list` checks each server with an MCP client of its own name and a ping.
      const entries = await entriesOf(key.id);
      expect(entries.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'ping']));
      expectAllAnsweredFrom(entries, { name: 'mcp-test-client', version: '0.0.1' });
    }, 120_000);

    it('a Gemini CLI session (ACP mode, no model) loads the tools, prompts and resources as gemini-cli-mcp-client, and none of its requests is refused', async () => {
      const key = await keyFor('Gemini CLI, session');
      const home = await geminiHome(key);
      // A placeholder key and a model URL where nothing listens: the session starts without a model.
      const env = { ...geminiEnv(home), GEMINI_API_KEY: 'no-model-in-this-test', GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${await freePort()}` };
      const acp = new StdioRpc('gemini', ['--acp'], { env, cwd: home }, true);
      try {
        await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
        await acp.request('authenticate', { methodId: 'gateway' });
        // In ACP mode a new session waits for its MCP servers' discovery to end before it answers.
        const session = await acp.request('session/new', { cwd: home, mcpServers: [] });
        expect(session.sessionId).toEqual(expect.any(String));
      } finally {
        await acp.close();
      }
      const entries = await entriesOf(key.id);
      expect(entries.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'prompts/list', 'resources/list']));
      expectAllAnsweredFrom(entries, { name: 'gemini-cli-mcp-client', version: GEMINI_VERSION });
    }, 120_000);
  });

  describe('Codex', () => {
    let home: string;
    let key: { key: string; id: string };
    let codexEnv: () => Record<string, string>;

    beforeAll(async () => {
      home = isolatedHome('codex');
      const codexHome = join(home, '.codex');
      mkdirSync(codexHome);
      // No update check, analytics or feedback; the model provider on a closed loopback port (a thread
      // connects to it when it starts), and no ChatGPT apps.
      writeFileSync(
        join(codexHome, 'config.toml'),
        [
          'check_for_update_on_startup = false',
          'model_provider = "loopback"',
          'model = "no-model-in-this-test"',
          '',
          '[model_providers.loopback]',
          'name = "loopback"',
          `base_url = "http://127.0.0.1:${await freePort()}/v1"`,
          '',
          '[analytics]',
          'enabled = false',
          '',
          '[feedback]',
          'enabled = false',
          '',
          '[features]',
          'apps = false',
          '',
        ].join('\n'),
      );
      key = await keyFor('Codex');
      codexEnv = () => hostEnv(home, { CODEX_HOME: codexHome, REBLOG_API_KEY: key.key });
    });

    it(`${CODEX_VERSION}: \`codex mcp add --url --bearer-token-env-var\`, then the app-server lists the tools and calls list_projects (as codex-mcp-client)`, async () => {
      const add = await runHost('codex', ['mcp', 'add', 'reblog', '--url', mcpUrl, '--bearer-token-env-var', 'REBLOG_API_KEY'], { env: codexEnv(), cwd: home });
      expectPrinted(add, "Added global MCP server 'reblog'.");

      const app = new StdioRpc('codex', ['app-server'], { env: codexEnv(), cwd: home });
      try {
        await app.request('initialize', { clientInfo: { name: 'reblog-hosts-test', title: null, version: '1.0.0' }, capabilities: null });
        app.notify('initialized');

        const status = await app.request('mcpServerStatus/list', { detail: 'toolsAndAuthOnly' });
        const reblog = status.data.find((s: { name: string }) => s.name === 'reblog');
        expect({ toolsError: reblog?.toolsError, server: reblog?.serverInfo?.name }).toEqual({ toolsError: null, server: 'reblog-mcp' });
        expect(Object.keys(reblog.tools)).toEqual(expect.arrayContaining(['list_projects', 'list_articles', 'get_article']));

        const { thread } = await app.request('thread/start', {});
        const result = await app.request('mcpServer/tool/call', { threadId: thread.id, server: 'reblog', tool: 'list_projects', arguments: {} });
        expect(result.isError ?? false).toBe(false);
        expect(result.structuredContent).toEqual({ items: [expect.objectContaining({ id: projectId, name: 'Demo blog', role: 'owner' })] });
      } finally {
        await app.close();
      }

      const entries = await entriesOf(key.id);
      expect(entries.filter((e) => e.method === 'tools/call')).toHaveLength(1);
      expect(entries.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
      expectAllAnsweredFrom(entries, { name: 'codex-mcp-client', version: CODEX_VERSION });
    }, 120_000);
  });
});
