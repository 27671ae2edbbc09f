import { randomBytes } from 'node:crypto';
import { newId } from '../../src/common/ids.js';
import { hashSecret } from '../../src/auth/secrets.js';
import { withClient } from './database.js';
import type { TestApp } from './test-app.js';

/** A registered (dcr) client written straight into the table; `secret` is set for a confidential one. */
export async function newClient(
  t: TestApp,
  opts: { redirect_uris?: string[]; client_name?: string; auth?: 'none' | 'client_secret_post' | 'client_secret_basic' } = {},
): Promise<{ client_id: string; client_secret?: string; redirect_uris: string[] }> {
  const client_id = randomBytes(16).toString('hex');
  const redirect_uris = opts.redirect_uris ?? ['http://127.0.0.1:9999/callback'];
  const auth = opts.auth ?? 'none';
  const client_secret = auth === 'none' ? undefined : randomBytes(32).toString('base64url');
  await withClient(t.config.databaseUrl!, (c) =>
    c.query(
      `INSERT INTO oauth_clients (id, source, client_name, redirect_uris, token_endpoint_auth_method, secret_hash, metadata) VALUES ($1, 'dcr', $2, $3, $4, $5, $6)`,
      [client_id, opts.client_name ?? 'Test client', redirect_uris, auth, client_secret ? hashSecret(client_secret) : null, { redirect_uris, client_name: opts.client_name ?? 'Test client' }],
    ),
  );
  return { client_id, client_secret, redirect_uris };
}

/**
 * An OAuth grant of a person written straight into the tables (the consent page's test makes them
 * through the pages): an access token valid for `ttlS` seconds. Answers the token and the grant's id.
 */
export async function oauthGrant(
  t: TestApp,
  opts: { accountId: string; userId: string; clientId: string; clientName?: string; projects: { project_id: string; role: 'viewer' | 'editor' | 'owner' }[]; scopes?: string[]; ttlS?: number },
): Promise<{ token: string; id: string }> {
  const id = newId();
  const token = 'rbg_' + randomBytes(32).toString('base64url');
  await withClient(t.config.databaseUrl!, async (c) => {
    await c.query('BEGIN');
    await c.query(
      `INSERT INTO credentials (id, account_id, type, name, secret_hash, secret_prefix, scopes, source, user_id, client_id)
       VALUES ($1, $2, 'grant', $3, NULL, $4, $5, 'oauth', $6, $7)`,
      [id, opts.accountId, opts.clientName ?? 'Test client', token.slice(0, 12), opts.scopes ?? ['read', 'write', 'generate', 'delete'], opts.userId, opts.clientId],
    );
    for (const p of opts.projects) {
      await c.query(`INSERT INTO credential_projects (credential_id, project_id, account_id, role) VALUES ($1, $2, $3, $4)`, [id, p.project_id, opts.accountId, p.role]);
    }
    await c.query(`INSERT INTO oauth_tokens (token_hash, credential_id, kind, client_id, expires_at) VALUES ($1, $2, 'access', $3, now() + make_interval(secs => $4))`, [
      hashSecret(token),
      id,
      opts.clientId,
      opts.ttlS ?? 3600,
    ]);
    await c.query('COMMIT');
  });
  return { token, id };
}
