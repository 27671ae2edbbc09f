import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../src/auth/secrets.js';
import { newId } from '../../src/common/ids.js';
import { SESSION_COOKIE } from '../../src/web/browser-sessions.service.js';
import { withClient } from './database.js';
import type { TestApp } from './test-app.js';

// People and sign-in for the e2e tests. The browser session is written straight into the table (a
// test of the sign-in pages themselves signs in through them); people go through the admin API
// once it has their endpoints.

export interface TestUser {
  id: string;
  email: string;
}

/** A new person (no membership yet). */
export async function newUser(t: TestApp, email = `person-${randomBytes(4).toString('hex')}@example.com`): Promise<TestUser> {
  const id = newId();
  await withClient(t.config.databaseUrl!, (c) => c.query(`INSERT INTO users (id, email) VALUES ($1, lower($2))`, [id, email]));
  return { id, email: email.toLowerCase() };
}

/** Makes a person a member (or owner) of an account. */
export async function addAccountMember(t: TestApp, accountId: string, userId: string, role: 'owner' | 'member'): Promise<void> {
  await withClient(t.config.databaseUrl!, (c) =>
    c.query(`INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (account_id, user_id) DO UPDATE SET role = $3`, [accountId, userId, role]),
  );
}

/** Gives an account member a role on a project. */
export async function addProjectMember(t: TestApp, accountId: string, projectId: string, userId: string, role: 'viewer' | 'editor' | 'owner'): Promise<void> {
  await withClient(t.config.databaseUrl!, (c) =>
    c.query(
      `INSERT INTO project_members (project_id, account_id, user_id, role) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, user_id) DO UPDATE SET role = $4`,
      [projectId, accountId, userId, role],
    ),
  );
}

/** A signed-in browser session of this person: the `Cookie` header value and the session's CSRF token. */
export async function signedIn(t: TestApp, userId: string): Promise<{ cookie: string; csrf: string }> {
  const secret = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await withClient(t.config.databaseUrl!, (c) =>
    c.query(`INSERT INTO browser_sessions (id_hash, user_id, csrf, expires_at) VALUES ($1, $2, $3, now() + interval '12 hours')`, [hashSecret(secret), userId, csrf]),
  );
  return { cookie: `${SESSION_COOKIE}=${secret}`, csrf };
}
