import { randomBytes } from 'node:crypto';
import type { TestApp } from './test-app.js';

/** An id that names nothing: a well-formed UUID v4 no row has. */
export const MISSING_ID = '00000000-0000-4000-8000-000000000000';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A time as the API writes it: ISO-8601 UTC with milliseconds. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type Role = 'viewer' | 'editor' | 'owner';
export type Scope = 'read' | 'write' | 'generate' | 'delete';

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

/** An account with `projects` projects and one API key reaching them all with `role` and `scopes`. */
export async function createTenant(
  t: TestApp,
  opts: { projects?: number; role?: Role; scopes?: Scope[]; disabledTools?: string[] } = {},
): Promise<Tenant> {
  const suffix = randomBytes(4).toString('hex');
  const account = await admin(t, 'post', '/admin/v1/accounts', { name: `Tenant ${suffix}`, owner_email: `owner-${suffix}@example.com` }, 201);
  const projectIds: string[] = [];
  for (let i = 0; i < (opts.projects ?? 1); i++) {
    const project = await admin(t, 'post', `/admin/v1/accounts/${account.id}/projects`, { name: `Project ${i + 1}`, disabled_tools: opts.disabledTools ?? [] }, 201);
    projectIds.push(project.id);
  }
  const key = await admin(
    t,
    'post',
    `/admin/v1/accounts/${account.id}/api-keys`,
    { name: 'test key', scopes: opts.scopes ?? ['read', 'write', 'generate', 'delete'], projects: projectIds.map((project_id) => ({ project_id, role: opts.role ?? 'owner' })) },
    201,
  );
  return { accountId: account.id, projectIds, key: key.key, keyId: key.id };
}
