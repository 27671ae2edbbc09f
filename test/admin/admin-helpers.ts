import type { Response } from 'supertest';
import type { TestApp } from '../support/test-app.js';

/** Sends a request with the admin token (or `token`, or none when null) and returns the raw answer. */
export function call(
  t: TestApp,
  method: 'get' | 'post' | 'put' | 'patch' | 'delete',
  path: string,
  body?: unknown,
  token: string | null = t.adminToken,
): Promise<Response> {
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
