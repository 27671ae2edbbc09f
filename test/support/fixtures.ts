import { randomBytes } from 'node:crypto';
import { callOk } from './mcp-client.js';
import type { TestApp } from './test-app.js';

/** An id that names nothing: a well-formed UUID v4 no row has. */
export const MISSING_ID = '00000000-0000-4000-8000-000000000000';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A time as the API writes it: ISO-8601 UTC with milliseconds. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type Role = 'viewer' | 'editor' | 'owner';
export type Scope = 'read' | 'write' | 'generate' | 'delete';
export const ALL_SCOPES: Scope[] = ['read', 'write', 'generate', 'delete'];

export interface Tenant {
  accountId: string;
  projectIds: string[];
  key: string;
  keyId: string;
}

/** Admin API call with the admin token; fails the test on an unexpected status. */
export async function admin<T = any>(t: TestApp, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown, expectStatus?: number): Promise<T> {
  const req = t.http[method](path).set('Authorization', `Bearer ${t.adminToken}`);
  const res = await (body === undefined ? req : req.send(body as object));
  if (expectStatus !== undefined && res.status !== expectStatus) {
    throw new Error(`${method.toUpperCase()} ${path} answered ${res.status}, expected ${expectStatus}: ${JSON.stringify(res.body)}`);
  }
  return res.body as T;
}

/** A project of `accountId`, as the admin API answers it. */
export async function newProject(
  t: TestApp,
  accountId: string,
  name = 'Blog',
  disabled_tools?: string[],
): Promise<{ id: string; account_id: string; name: string; disabled_tools: string[]; created_at: string }> {
  return admin(t, 'post', `/admin/v1/accounts/${accountId}/projects`, { name, ...(disabled_tools ? { disabled_tools } : {}) }, 201);
}

/** A new account, as the admin API answers it. */
export async function newAccount(t: TestApp): Promise<{ id: string; name: string; owner_email: string; created_at: string }> {
  const suffix = randomBytes(4).toString('hex');
  return admin(t, 'post', '/admin/v1/accounts', { name: `Account ${suffix}`, owner_email: `owner-${suffix}@example.com` }, 201);
}

/** A new account with the named projects (optionally with disabled tools); no credential yet. */
export async function newAccountWithProjects(
  t: TestApp,
  projects: { name?: string; disabled_tools?: string[] }[],
): Promise<{ accountId: string; projectIds: string[] }> {
  const account = await newAccount(t);
  const projectIds: string[] = [];
  for (const [i, p] of projects.entries()) projectIds.push((await newProject(t, account.id, p.name ?? `Project ${i + 1}`, p.disabled_tools)).id);
  return { accountId: account.id, projectIds };
}

/** An API key of `accountId` reaching the given projects with the given roles. */
export async function newKey(
  t: TestApp,
  accountId: string,
  projects: { project_id: string; role: Role }[],
  scopes: Scope[] = ALL_SCOPES,
  name = 'e2e key',
): Promise<{ key: string; id: string }> {
  const created = await admin(t, 'post', `/admin/v1/accounts/${accountId}/api-keys`, { name, scopes, projects }, 201);
  return { key: created.key, id: created.id };
}

/** Every project of `projectIds` with one `role`, as a credential's `projects` list. */
export function withRole(projectIds: string[], role: Role): { project_id: string; role: Role }[] {
  return projectIds.map((project_id) => ({ project_id, role }));
}

/** A grant (OAuth-style access token) of `accountId`. */
export async function newGrant(
  t: TestApp,
  accountId: string,
  projects: { project_id: string; role: Role }[],
  scopes: Scope[] = ALL_SCOPES,
): Promise<{ token: string; id: string }> {
  const created = await admin(t, 'post', `/admin/v1/accounts/${accountId}/grants`, { client_name: 'e2e client', scopes, projects }, 201);
  return { token: created.access_token, id: created.id };
}

/** An account with `projects` projects and one API key reaching them all with `role` and `scopes`. */
export async function createTenant(t: TestApp, opts: { projects?: number; role?: Role; scopes?: Scope[]; disabledTools?: string[] } = {}): Promise<Tenant> {
  const { accountId, projectIds } = await newAccountWithProjects(
    t,
    Array.from({ length: opts.projects ?? 1 }, () => ({ disabled_tools: opts.disabledTools ?? [] })),
  );
  const key = await newKey(t, accountId, withRole(projectIds, opts.role ?? 'owner'), opts.scopes, 'test key');
  return { accountId, projectIds, key: key.key, keyId: key.id };
}

/** Walks an admin list with `limit` until `next_cursor` is null; returns every page. */
export async function walk(t: TestApp, path: string, limit: number): Promise<{ items: any[]; next_cursor: string | null }[]> {
  const pages: { items: any[]; next_cursor: string | null }[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const page: { items: any[]; next_cursor: string | null } = await admin(
      t,
      'get',
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      undefined,
      200,
    );
    pages.push(page);
    cursor = page.next_cursor;
    if (cursor === null) return pages;
  }
  throw new Error(`${path} did not end after 100 pages`);
}

/** Every activity entry of an account (newest first, all pages), optionally filtered by a query string. */
export async function activity(t: TestApp, accountId: string, query = ''): Promise<any[]> {
  const pages = await walk(t, `/admin/v1/accounts/${accountId}/activity${query ? `?${query}` : ''}`, 200);
  return pages.flatMap((page) => page.items);
}

/** Writer answers that satisfy configure_agent. */
export const WRITER_ANSWERS = {
  audience: 'Home cooks',
  tone: 'Warm',
  language: 'en',
  topics: 'bread, baking',
  length: 'short',
  banned_words: '',
  image_style: 'watercolour',
};

/** A tenant whose project(s) have a writer config, so the writing tools run. */
export async function configuredTenant(t: TestApp, opts: Parameters<typeof createTenant>[1] = {}): Promise<Tenant> {
  const tenant = await createTenant(t, opts);
  for (const project_id of tenant.projectIds) {
    await callOk(t, tenant.key, 'configure_agent', { agent: 'writer', answers: WRITER_ANSWERS, ...(tenant.projectIds.length > 1 ? { project_id } : {}) });
  }
  return tenant;
}
