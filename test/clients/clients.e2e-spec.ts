import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { createDatabase, withClient, type TestDatabase } from '../support/database.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import type { TestApp } from '../support/test-app.js';
import { connectClientV2 } from './adapters/client-v2.js';
import { connectLangchain } from './adapters/langchain.js';
import { connectSdkV1 } from './adapters/sdk-v1.js';
import { runSeedFlow, SEED_STEPS, type SeedClient, type StepResult } from './seed-flow.js';

// The MCP client libraries people build agents with, each walking the seed flow (./seed-flow.ts)
// against the real server with its default settings (the budget of requests per credential
// included), unpaced, as the library's README connects. The libraries that load in Node 20 run here;
// those that need Node 22 or later run their flow (./flows/*.mjs) in a Node 24 child process. Each
// client has a tenant of its own, so a credential's budget is its own. README's table of clients
// says what each one speaks and how it went.

const ROOT = resolve(__dirname, '..', '..');
/** The rate limit as a server starts with: empty values are the defaults, not the test apps' raised budget. */
const SERVER_DEFAULTS = { RATE_LIMIT_PER_SECOND: '', RATE_LIMIT_MAX_WAIT_MS: '' };

/** A Node of 22 or later: this one, or Node 24 from the npm registry (scripts/node-lts.mjs). */
function modernNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const found = spawnSync(process.execPath, [join(ROOT, 'scripts', 'node-lts.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`scripts/node-lts.mjs found no Node 24: ${found.stderr}`);
  return found.stdout.trim();
}

/** Runs ./flows/<name>.mjs under a Node of 22 or later against `url` with `token`; answers its steps, or fails with its error. */
function runFlowProcess(name: string, url: string, token: string, projectId: string): Promise<{ steps: StepResult[]; revision?: string }> {
  const child = spawn(modernNode(), [join(__dirname, 'flows', `${name}.mjs`)], {
    cwd: ROOT,
    // No tracing export (@openai/agents would send its traces to OpenAI): only loopback is reached.
    env: { ...process.env, MCP_URL: url, MCP_TOKEN: token, PROJECT_ID: projectId, NODE_NO_WARNINGS: '1', OPENAI_AGENTS_DISABLE_TRACING: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      let answer: any;
      try {
        answer = JSON.parse(last);
      } catch {
        return fail(new Error(`flows/${name}.mjs exited ${code} without an answer:\n${out.slice(-2000)}\n${err.slice(-2000)}`));
      }
      if (code !== 0 || answer.error) return fail(new Error(`${answer.error ?? `exited ${code}`}\n${err.slice(-1500)}`));
      done(answer);
    });
  });
}

/**
 * The protocol revisions the server recorded for a credential's sessions. A 2025 client always opens
 * one with `initialize`; a client that made its calls without any spoke 2026-07-28, which has none.
 */
async function revisionsSpoken(db: TestDatabase, tenant: Tenant): Promise<string[]> {
  const rows = await withClient(db.url, (c) =>
    c.query<{ v: string }>('SELECT DISTINCT protocol_version AS v FROM mcp_sessions WHERE credential_id = $1 ORDER BY v', [tenant.keyId]),
  );
  return rows.rows.length ? rows.rows.map((r) => r.v) : ['2026-07-28'];
}

/** A client of the matrix: how it runs the flow, and what it is known to support and speak. */
interface Case {
  name: string;
  run(url: string, tenant: Tenant): Promise<{ steps: StepResult[]; revision?: string }>;
  revision: string;
  /** The steps the library offers no call for. */
  skipped: string[];
}

/** Connects with `connect`, walks the flow, closes. */
async function inProcess(connect: () => Promise<SeedClient & { close(): Promise<void>; revision?: () => string | undefined }>, tenant: Tenant) {
  const client = await connect();
  try {
    return { steps: await runSeedFlow(client, { projectId: tenant.projectIds[0] }), revision: client.revision?.() };
  } finally {
    await client.close();
  }
}

const CASES: Case[] = [
  { name: '@modelcontextprotocol/sdk (v1)', run: (url, t) => inProcess(() => connectSdkV1(url, t.key), t), revision: '2025-11-25', skipped: [] },
  {
    name: '@modelcontextprotocol/client (v2)',
    run: (url, t) => inProcess(() => connectClientV2(url, t.key, 'default'), t),
    revision: '2025-11-25',
    skipped: [],
  },
  {
    name: '@modelcontextprotocol/client (v2), versionNegotiation: auto',
    run: (url, t) => inProcess(() => connectClientV2(url, t.key, 'auto'), t),
    revision: '2026-07-28',
    skipped: [],
  },
  {
    name: '@openai/agents (MCPServerStreamableHttp)',
    run: (url, t) => runFlowProcess('openai-agents', url, t.key, t.projectIds[0]),
    revision: '2026-07-28',
    skipped: ['a prompt'],
  },
  { name: '@ai-sdk/mcp (createMCPClient)', run: (url, t) => runFlowProcess('ai-sdk', url, t.key, t.projectIds[0]), revision: '2026-07-28', skipped: [] },
  {
    name: '@langchain/mcp-adapters (MultiServerMCPClient)',
    run: (url, t) => inProcess(() => connectLangchain(url, t.key), t),
    revision: '2025-11-25',
    skipped: ['a prompt'],
  },
];

describe('MCP client libraries walk the seed flow, unpaced, against the server as it starts', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app(SERVER_DEFAULTS);
  });
  afterAll(() => db?.drop());

  it('runs with the default budget of requests per credential, and the default wait over it', () => {
    const defaults = loadConfig({});
    expect([t.config.rateLimitPerSecond, t.config.rateLimitMaxWaitMs]).toEqual([defaults.rateLimitPerSecond, defaults.rateLimitMaxWaitMs]);
  });

  it.each(CASES)(
    '$name',
    async ({ run, revision, skipped }) => {
      const tenant = await createTenant(t);
      const { steps, revision: reported } = await run(`${t.baseUrl}/mcp`, tenant);
      expect(steps).toEqual(SEED_STEPS.map((step) => ({ step, outcome: skipped.includes(step) ? 'skipped' : 'ok' })));
      expect(await revisionsSpoken(db, tenant)).toEqual([revision]);
      // Where the library tells which revision it negotiated, it agrees.
      if (reported !== undefined) expect(reported).toBe(revision);
    },
    60_000,
  );
});
