import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../src/auth/secrets.js';
import { SESSION_COOKIE } from '../../src/web/browser-sessions.service.js';
import { withClient } from './database.js';
import type { TestApp } from './test-app.js';

// People and sign-in for the e2e tests. People and memberships go through the admin API; the browser
// session is written straight into the table (a test of the sign-in pages themselves signs in through them).

export interface TestUser {
  id: string;
  email: string;
}

/** Sends an admin API request and fails the test unless it answers `expectStatus`. */
async function adminCall(t: TestApp, method: 'post' | 'put', path: string, body: object, expectStatus: number): Promise<any> {
  const res = await t.http[method](path).set('Authorization', `Bearer ${t.adminToken}`).send(body);
  if (res.status !== expectStatus)
    throw new Error(`${method.toUpperCase()} ${path} answered ${res.status}, expected ${expectStatus}: ${res.text.slice(0, 500)}`);
  return res.body;
}

/** A new person (no membership yet). */
export async function newUser(t: TestApp, email = `person-${randomBytes(4).toString('hex')}@example.com`): Promise<TestUser> {
  const user = await adminCall(t, 'post', '/admin/v1/users', { email }, 201);
  return { id: user.id, email: user.email };
}

/** Makes a person a member (or owner) of an account. */
export async function addAccountMember(t: TestApp, accountId: string, userId: string, role: 'owner' | 'member'): Promise<void> {
  await adminCall(t, 'put', `/admin/v1/accounts/${accountId}/members/${userId}`, { role }, 200);
}

/** Gives an account member a role on a project (`accountId` is the project's: kept for the callers that pass it). */
export async function addProjectMember(t: TestApp, _accountId: string, projectId: string, userId: string, role: 'viewer' | 'editor' | 'owner'): Promise<void> {
  await adminCall(t, 'put', `/admin/v1/projects/${projectId}/members/${userId}`, { role }, 200);
}

/** A signed-in browser session of this person: the `Cookie` header value and the session's CSRF token. */
export async function signedIn(t: TestApp, userId: string): Promise<{ cookie: string; csrf: string }> {
  const secret = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await withClient(t.config.databaseUrl!, (c) =>
    c.query(`INSERT INTO browser_sessions (id_hash, user_id, csrf, expires_at) VALUES ($1, $2, $3, now() + interval '12 hours')`, [
      hashSecret(secret),
      userId,
      csrf,
    ]),
  );
  return { cookie: `${SESSION_COOKIE}=${secret}`, csrf };
}
