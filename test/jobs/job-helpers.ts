import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/database/migrate.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { rpc, toolJson } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/**
 * A database of its own on the test run's Postgres, migrated. Every app of the test run runs a job
 * worker (ROLE=all); a separate database keeps other test files' workers from claiming these
 * jobs with another configuration, and this file's workers from claiming theirs.
 */
export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL!;
  const name = `reblog_jobs_${randomBytes(5).toString('hex')}`;
  await withClient(base, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return {
    url: url.toString(),
    drop: () => withClient(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Polls `read` until `done(value)` holds, failing after `timeoutMs` with the last value seen. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let nextId = 1;

/** `tools/call` over raw HTTP; a JSON-RPC error fails the test with its message. */
export async function callTool(t: TestApp, token: string, name: string, args: Record<string, unknown> = {}): Promise<{ content: any[]; structuredContent?: any; isError?: boolean }> {
  const res = await rpc(t, token, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } });
  if (res.status !== 200 || res.body.error) throw new Error(`${name} answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.result;
}

/** A tool call's JSON value, failing the test if it is a tool error. */
export async function callOk(t: TestApp, token: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await callTool(t, token, name, args);
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return toolJson(result);
}

/** A tool call that must be a tool error: its `{code, message}`. */
export async function callError(t: TestApp, token: string, name: string, args: Record<string, unknown> = {}): Promise<{ code: string; message: string }> {
  const result = await callTool(t, token, name, args);
  if (!result.isError) throw new Error(`${name} was expected to fail but answered ${result.content[0].text}`);
  return toolJson(result).error;
}

export const WRITER_ANSWERS = { audience: 'Home cooks', tone: 'Warm', language: 'en', topics: 'bread, baking', length: 'short', banned_words: '', image_style: 'watercolour' };

/** A tenant whose project(s) have a writer config, so the writing tools run. */
export async function configuredTenant(t: TestApp, opts: Parameters<typeof createTenant>[1] = {}): Promise<Tenant> {
  const tenant = await createTenant(t, opts);
  for (const project_id of tenant.projectIds) {
    await callOk(t, tenant.key, 'configure_agent', { agent: 'writer', answers: WRITER_ANSWERS, ...(tenant.projectIds.length > 1 ? { project_id } : {}) });
  }
  return tenant;
}

/** A job row as Postgres holds it. */
export async function jobRow(url: string, id: string): Promise<any> {
  return withClient(url, async (c) => (await c.query('SELECT * FROM jobs WHERE id = $1', [id])).rows[0]);
}
