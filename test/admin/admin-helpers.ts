import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { admin } from '../support/fixtures.js';
import type { TestApp } from '../support/test-app.js';
export { ISO, MISSING_ID, UUID } from '../support/fixtures.js';

/** A timestamp as JSON carries it: ISO-8601 in UTC with milliseconds. */
/** A well-formed UUID that no row has. */

/** Sends a request with the admin token (or `token`, or none when null) and returns the raw answer. */
export function call(t: TestApp, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown, token: string | null = t.adminToken): Promise<Response> {
  let req = t.http[method](path);
  if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
  return body === undefined ? req : req.send(body as object);
}

/** Asserts the admin API's error envelope with its exact status and code; returns the error object. */
export function expectError(res: Response, status: number, code: string): { code: string; message: string; details?: unknown } {
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 500)}`);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error).toEqual(expect.objectContaining({ code }));
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  expect(Object.keys(res.body)).toEqual(['error']);
  return res.body.error;
}

export async function newAccount(t: TestApp): Promise<{ id: string; name: string; owner_email: string; created_at: string }> {
  const suffix = randomBytes(4).toString('hex');
  return admin(t, 'post', '/admin/v1/accounts', { name: `Account ${suffix}`, owner_email: `owner-${suffix}@example.com` }, 201);
}

export async function newProject(t: TestApp, accountId: string, name = 'Blog', disabled_tools?: string[]): Promise<{ id: string; account_id: string; name: string; disabled_tools: string[]; created_at: string }> {
  return admin(t, 'post', `/admin/v1/accounts/${accountId}/projects`, { name, ...(disabled_tools ? { disabled_tools } : {}) }, 201);
}

/** Walks a list with `limit` until `next_cursor` is null; returns every page. */
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
