import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { ArticlesService, type NewArticle } from '../../src/articles/articles.service.js';
import { admin, type Role, type Scope } from '../support/fixtures.js';
import type { TestApp } from '../support/test-app.js';
export { ISO, MISSING_ID, UUID } from '../support/fixtures.js';

/** A well-formed UUID that names nothing. */

/** Tools by the scope and lowest role the contract gives them (spec/mcp.md "Who calls"). */
export const TOOL_TABLE: Record<string, { scope: Scope; role: Role; projectScoped: boolean }> = {
  list_projects: { scope: 'read', role: 'viewer', projectScoped: false },
  list_articles: { scope: 'read', role: 'viewer', projectScoped: true },
  get_article: { scope: 'read', role: 'viewer', projectScoped: true },
  create_article: { scope: 'write', role: 'editor', projectScoped: true },
  update_article: { scope: 'write', role: 'editor', projectScoped: true },
  publish_article: { scope: 'write', role: 'editor', projectScoped: true },
  delete_article: { scope: 'delete', role: 'owner', projectScoped: true },
  configure_agent: { scope: 'write', role: 'editor', projectScoped: true },
  get_agent_config: { scope: 'read', role: 'viewer', projectScoped: true },
  write_article: { scope: 'generate', role: 'editor', projectScoped: true },
  generate_image: { scope: 'generate', role: 'editor', projectScoped: true },
  list_jobs: { scope: 'read', role: 'viewer', projectScoped: true },
  get_job: { scope: 'read', role: 'viewer', projectScoped: false },
  cancel_job: { scope: 'write', role: 'editor', projectScoped: false },
};

export const ALL_SCOPES: Scope[] = ['read', 'write', 'generate', 'delete'];

/** A new account with named projects (optionally with disabled tools); no credential yet. */
export async function newAccount(t: TestApp, projects: { name?: string; disabled_tools?: string[] }[] = [{}]): Promise<{ accountId: string; projectIds: string[] }> {
  const suffix = randomBytes(4).toString('hex');
  const account = await admin(t, 'post', '/admin/v1/accounts', { name: `Account ${suffix}`, owner_email: `owner-${suffix}@example.com` }, 201);
  const projectIds: string[] = [];
  for (const [i, p] of projects.entries()) {
    const project = await admin(t, 'post', `/admin/v1/accounts/${account.id}/projects`, { name: p.name ?? `Project ${i + 1}`, disabled_tools: p.disabled_tools ?? [] }, 201);
    projectIds.push(project.id);
  }
  return { accountId: account.id, projectIds };
}

/** An API key of `accountId` reaching the given projects with the given roles. */
export async function newKey(t: TestApp, accountId: string, projects: { project_id: string; role: Role }[], scopes: Scope[] = ALL_SCOPES, name = 'e2e key'): Promise<{ key: string; id: string }> {
  const created = await admin(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name, scopes, projects }, 201);
  return { key: created.key, id: created.id };
}

/** A grant (OAuth-style access token) of `accountId`. */
export async function newGrant(t: TestApp, accountId: string, projects: { project_id: string; role: Role }[], scopes: Scope[] = ALL_SCOPES): Promise<{ token: string; id: string }> {
  const created = await admin(t, 'post', `/admin/v1/accounts/${accountId}/grants`, { client_name: 'e2e client', scopes, projects }, 201);
  return { token: created.access_token, id: created.id };
}

/** Every activity entry of an account (newest first), optionally filtered by a query string. */
export async function activity(t: TestApp, accountId: string, query = ''): Promise<any[]> {
  const page = await admin(t, 'get', `/admin/v1/accounts/${accountId}/activity?limit=200${query ? `&${query}` : ''}`, undefined, 200);
  return page.items;
}

/** Seeds an article through the domain service, as the write tools will. */
export function seedArticle(t: TestApp, accountId: string, projectId: string, input: NewArticle) {
  return t.app.get(ArticlesService).create({ accountId, projectId }, input);
}

/** A raw POST /mcp: the body is sent as given (string or bytes), with only the headers given plus defaults. */
export function rawPost(t: TestApp, body: string | Buffer, headers: Record<string, string> = {}) {
  const req = t.http.post('/mcp');
  const all = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers };
  for (const [k, v] of Object.entries(all)) if (v !== '') req.set(k, v);
  return req.send(body);
}

/** POSTs exact bytes to /mcp with node:http (supertest would serialise a Buffer as JSON). */
export function postBytes(t: TestApp, bytes: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; text: string; body: any }> {
  const url = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: '/mcp', method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': String(bytes.length), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, text, body });
        });
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

/** Initializes a session with raw HTTP; returns its id and the answer. */
export async function initSession(t: TestApp, token: string, protocolVersion = '2025-06-18', clientInfo = { name: 'raw-agent', version: '9.9.9' }) {
  const res = await t.http
    .post('/mcp')
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream')
    .set('Authorization', `Bearer ${token}`)
    .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo } }));
  if (res.status !== 200) throw new Error(`initialize answered ${res.status}: ${res.text}`);
  return { sessionId: res.headers['mcp-session-id'] as string, res };
}

/** A tools/call request body. */
export function call(id: number | string, name: string, args?: unknown) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: args === undefined ? { name } : { name, arguments: args } };
}

/** The text block of a tool result, parsed, after checking the result has exactly one text block. */
export function singleJson(result: any): any {
  expect(Array.isArray(result.content)).toBe(true);
  expect(result.content).toHaveLength(1);
  expect(result.content[0].type).toBe('text');
  return JSON.parse(result.content[0].text);
}

/** Asserts a tool-level failure: isError, one text block `{"error":{code,message}}`, no structuredContent. */
export function expectToolError(result: any, code?: string): { code: string; message: string } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const value = singleJson(result);
  expect(Object.keys(value)).toEqual(['error']);
  expect(Object.keys(value.error).sort()).toEqual(['code', 'message']);
  expect(typeof value.error.message).toBe('string');
  if (code) expect(value.error.code).toBe(code);
  expect(result.content[0].text).toBe(JSON.stringify(value, null, 2));
  return value.error;
}

/** A tool success: one text block holding `JSON.stringify(value, null, 2)` and the same value as structuredContent. */
export function expectToolResult(result: any): any {
  expect(result.isError).toBeFalsy();
  const value = singleJson(result);
  expect(result.content[0].text).toBe(JSON.stringify(value, null, 2));
  expect(result.structuredContent).toEqual(value);
  expect(value !== null && typeof value === 'object' && !Array.isArray(value)).toBe(true);
  return value;
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** An Ajv instance with formats, for checking results against a tool's published outputSchema. */
export function outputValidator(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}
