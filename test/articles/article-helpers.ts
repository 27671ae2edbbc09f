import { DataSource } from 'typeorm';
import { admin, type Role, type Scope } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';
export { MISSING_ID } from '../support/fixtures.js';

/** A well-formed UUID that names nothing. */

/** What a raw `tools/call` answered: the HTTP status, and either the tool's JSON or the JSON-RPC error. */
export interface CallOutcome {
  status: number;
  isError: boolean;
  /** The JSON of the single text block (the value, or `{"error":{...}}`). */
  json: any;
  structured?: any;
  rpcError?: { code: number; message: string };
}

let nextId = 1;

/** `tools/call` over raw HTTP (no session, like a stateless client). */
export async function callTool(t: TestApp, key: string, name: string, args: Record<string, unknown>): Promise<CallOutcome> {
  const res = await rpc(t, key, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } });
  const body = res.body as { result?: { content: { text: string }[]; isError?: boolean; structuredContent?: unknown }; error?: { code: number; message: string } };
  if (body?.error || !body?.result) return { status: res.status, isError: false, json: undefined, rpcError: body?.error };
  return { status: res.status, isError: body.result.isError === true, json: JSON.parse(body.result.content[0].text), structured: body.result.structuredContent };
}

/** Like {@link callTool}, but the call must have succeeded: answers the tool's value. */
export async function ok(t: TestApp, key: string, name: string, args: Record<string, unknown>): Promise<any> {
  const out = await callTool(t, key, name, args);
  if (out.status !== 200 || out.isError || out.rpcError) throw new Error(`${name} ${JSON.stringify(args).slice(0, 200)} failed: ${JSON.stringify(out).slice(0, 500)}`);
  return out.json;
}

/** Like {@link callTool}, but the call must have been a tool error: answers `{code, message}`. */
export async function toolError(t: TestApp, key: string, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const out = await callTool(t, key, name, args);
  if (out.status !== 200 || !out.isError) throw new Error(`${name} was expected to be a tool error: ${JSON.stringify(out).slice(0, 500)}`);
  expect(out.structured).toBeUndefined();
  return out.json.error;
}

/** The app's own DataSource, for checks in SQL (counts, revisions) and for ageing rows. */
export function sql(t: TestApp): DataSource {
  return t.app.get(DataSource);
}

/** An API key of `accountId` reaching `projects` with `role` and `scopes`. */
export async function keyFor(t: TestApp, accountId: string, projects: string[], role: Role, scopes: Scope[] = ['read', 'write', 'generate', 'delete']): Promise<{ key: string; id: string }> {
  const created = await admin(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name: `${role} key`, scopes, projects: projects.map((project_id) => ({ project_id, role })) }, 201);
  return { key: created.key, id: created.id };
}

/** The live count of a project's articles, by status, counted the slow way. */
export async function countedByStatus(t: TestApp, projectId: string): Promise<Record<string, number>> {
  const rows = (await sql(t).query(`SELECT status, count(*)::int AS n FROM articles WHERE project_id = $1 AND deleted_at IS NULL GROUP BY status`, [projectId])) as {
    status: string;
    n: number;
  }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** `list_articles` totals for the whole project and per status, as the tool answers them. */
export async function listedTotals(t: TestApp, key: string, projectId: string): Promise<{ all: number; byStatus: Record<string, number> }> {
  const all = (await ok(t, key, 'list_articles', { project_id: projectId, page_size: 1 })).pagination.total as number;
  const byStatus: Record<string, number> = {};
  for (const status of ['draft', 'scheduled', 'published', 'archived']) {
    const total = (await ok(t, key, 'list_articles', { project_id: projectId, status, page_size: 1 })).pagination.total as number;
    if (total) byStatus[status] = total;
  }
  return { all, byStatus };
}

/** The listing totals must equal count(*), overall and per status. */
export async function expectTotalsMatch(t: TestApp, key: string, projectId: string): Promise<void> {
  const counted = await countedByStatus(t, projectId);
  const listed = await listedTotals(t, key, projectId);
  expect(listed.byStatus).toEqual(counted);
  expect(listed.all).toBe(Object.values(counted).reduce((a, b) => a + b, 0));
}
