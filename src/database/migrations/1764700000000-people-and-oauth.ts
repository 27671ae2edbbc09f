import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People and the OAuth 2.1 server (docs/oauth.md): users with account and project memberships,
 * sign-in (login links, browser sessions), OAuth clients, pending authorization requests, codes, and
 * the access and refresh tokens of OAuth grants. A grant stays one `credentials` row (type `grant`);
 * an OAuth grant has a user and a client, and its bearer secrets live in `oauth_tokens` (one grant
 * has several valid access tokens while clients refresh in parallel), so its own `secret_hash` is null.
 * Every existing account's `owner_email` becomes a user and an owner member.
 */
export class PeopleAndOauth1764700000000 implements MigrationInterface {
  name = 'PeopleAndOauth1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        email text NOT NULL UNIQUE CHECK (email = lower(email)),
        name text,
        disabled_at timestamptz,
        oidc_issuer text,
        oidc_subject text,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (oidc_issuer, oidc_subject)
      )`);

    await q.query(`
      CREATE TABLE account_members (
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, user_id)
      )`);
    await q.query(`CREATE INDEX account_members_user_idx ON account_members (user_id)`);

    // Ending an account membership ends the person's project memberships there (the second key).
    await q.query(`
      CREATE TABLE project_members (
        project_id uuid NOT NULL,
        account_id uuid NOT NULL,
        user_id uuid NOT NULL,
        role text NOT NULL CHECK (role IN ('viewer', 'editor', 'owner')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id),
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE,
        FOREIGN KEY (account_id, user_id) REFERENCES account_members(account_id, user_id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX project_members_user_idx ON project_members (user_id, account_id)`);

    await q.query(`
      CREATE TABLE login_links (
        token_hash bytea PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        return_to text,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    // The rb_session cookie: its secret is kept as a hash; csrf is the token the session's forms carry.
    await q.query(`
      CREATE TABLE browser_sessions (
        id_hash bytea PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX browser_sessions_expiry_idx ON browser_sessions (expires_at)`);

    // Registered (dcr) or fetched (cimd, id = the document's URL) clients.
    await q.query(`
      CREATE TABLE oauth_clients (
        id text PRIMARY KEY,
        source text NOT NULL CHECK (source IN ('dcr', 'cimd')),
        client_name text,
        redirect_uris text[] NOT NULL,
        token_endpoint_auth_method text NOT NULL DEFAULT 'none'
          CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
        secret_hash bytea,
        metadata jsonb NOT NULL DEFAULT '{}',
        document_fetched_at timestamptz,
        document_fresh_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_clients_unused_idx ON oauth_clients (created_at) WHERE last_used_at IS NULL`);

    // An authorize request waiting for the signed-in person's consent (10 min, single use, one browser session).
    await q.query(`
      CREATE TABLE oauth_requests (
        id_hash bytea PRIMARY KEY,
        browser_session_hash bytea NOT NULL,
        client_id text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        state text,
        code_challenge text NOT NULL,
        resource text,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);

    // A code names what was consented; the grant is made when it is exchanged (credential_id), and
    // revoked if the code comes back.
    await q.query(`
      CREATE TABLE oauth_codes (
        code_hash bytea PRIMARY KEY,
        client_id text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        code_challenge text NOT NULL,
        resource text,
        scopes text[] NOT NULL,
        projects jsonb NOT NULL,
        credential_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);

    await q.query(`ALTER TABLE credentials ALTER COLUMN secret_hash DROP NOT NULL`);
    await q.query(`ALTER TABLE credentials ADD COLUMN source text NOT NULL DEFAULT 'admin' CHECK (source IN ('admin', 'oauth'))`);
    await q.query(`ALTER TABLE credentials ADD COLUMN user_id uuid REFERENCES users(id) ON DELETE CASCADE`);
    await q.query(`ALTER TABLE credentials ADD COLUMN client_id text`);
    await q.query(
      `ALTER TABLE credentials ADD COLUMN revoked_reason text CHECK (revoked_reason IN ('admin', 'user', 'refresh_token_reuse', 'code_replay', 'client_deleted'))`,
    );
    await q.query(`UPDATE credentials SET revoked_reason = 'admin' WHERE revoked_at IS NOT NULL`);
    await q.query(`CREATE INDEX credentials_user_idx ON credentials (user_id) WHERE user_id IS NOT NULL`);
    await q.query(`CREATE INDEX credentials_client_idx ON credentials (client_id) WHERE client_id IS NOT NULL`);

    // The bearer secrets of OAuth grants. A refresh token is rotated (rotated_at) rather than deleted,
    // so a second use can be told apart: within the grace it gets a pair of its own, after it revokes.
    await q.query(`
      CREATE TABLE oauth_tokens (
        token_hash bytea PRIMARY KEY,
        credential_id uuid NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
        client_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        rotated_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_tokens_credential_idx ON oauth_tokens (credential_id)`);

    await q.query(`
      INSERT INTO users (id, email, created_at)
      SELECT DISTINCT ON (lower(owner_email)) gen_random_uuid(), lower(owner_email), min(created_at) OVER (PARTITION BY lower(owner_email))
        FROM accounts
      ON CONFLICT (email) DO NOTHING`);
    await q.query(`
      INSERT INTO account_members (account_id, user_id, role)
      SELECT a.id, u.id, 'owner' FROM accounts a JOIN users u ON u.email = lower(a.owner_email)
      ON CONFLICT DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_tokens`);
    await q.query(`DELETE FROM credentials WHERE secret_hash IS NULL`);
    await q.query(`ALTER TABLE credentials DROP COLUMN revoked_reason, DROP COLUMN client_id, DROP COLUMN user_id, DROP COLUMN source`);
    await q.query(`ALTER TABLE credentials ALTER COLUMN secret_hash SET NOT NULL`);
    await q.query(`DROP TABLE oauth_codes`);
    await q.query(`DROP TABLE oauth_requests`);
    await q.query(`DROP TABLE oauth_clients`);
    await q.query(`DROP TABLE browser_sessions`);
    await q.query(`DROP TABLE login_links`);
    await q.query(`DROP TABLE project_members`);
    await q.query(`DROP TABLE account_members`);
    await q.query(`DROP TABLE users`);
  }
}
