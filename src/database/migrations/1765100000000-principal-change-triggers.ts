import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change to what a bearer secret may do announces itself on the cache channel (`reblog_cache`,
 * src/database/notifications.service.ts) from inside its own transaction, so the notification leaves
 * exactly when the change commits, and every instance drops the principals it cached
 * (src/auth/principal.resolver.ts). Whatever made the change (a service, a cascade, psql) cannot
 * forget to tell. `credential:<secret hash, base64>` drops one API key, admin grant or access token;
 * `credentials` drops every cached principal (an OAuth grant's secrets are its tokens; a role, a
 * person or a project changes many). Postgres sends a payload once per transaction however many
 * rows repeat it.
 *
 * Only the columns the principal lookup reads fire, and only when they change, so writes on other
 * paths (a client's `last_used_at`, a person's sign-in) send nothing; the lookup itself only reads.
 * A new credential or its first project links fire nothing: no cached principal names a credential
 * that did not exist (unknown tokens are remembered apart and stay unknown).
 */
export class PrincipalChangeTriggers1765100000000 implements MigrationInterface {
  name = 'PrincipalChangeTriggers1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION reblog_principals_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('reblog_cache', 'credentials');
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION reblog_credential_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('reblog_cache', CASE WHEN OLD.secret_hash IS NULL THEN 'credentials' ELSE 'credential:' || encode(OLD.secret_hash, 'base64') END);
        RETURN NULL;
      END $$`);

    await q.query(`
      CREATE FUNCTION reblog_token_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('reblog_cache', 'credential:' || encode(OLD.token_hash, 'base64'));
        RETURN NULL;
      END $$`);

    await q.query(`
      CREATE TRIGGER credentials_changed AFTER UPDATE OF account_id, type, name, secret_hash, scopes, expires_at, revoked_at, user_id ON credentials
        FOR EACH ROW WHEN (
          OLD.account_id IS DISTINCT FROM NEW.account_id OR OLD.type IS DISTINCT FROM NEW.type OR OLD.name IS DISTINCT FROM NEW.name
          OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
          OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.user_id IS DISTINCT FROM NEW.user_id)
        EXECUTE FUNCTION reblog_credential_changed()`);
    await q.query(`CREATE TRIGGER credentials_deleted AFTER DELETE ON credentials FOR EACH ROW EXECUTE FUNCTION reblog_credential_changed()`);
    // An OAuth grant's bearer secrets are its access tokens: one deleted or cut short while it is live
    // drops its cached principal. The purge deletes only tokens long expired, which fire nothing.
    await q.query(`
      CREATE TRIGGER oauth_tokens_changed AFTER UPDATE OF token_hash, credential_id, kind, expires_at ON oauth_tokens
        FOR EACH ROW WHEN (OLD.kind = 'access' AND OLD.expires_at > now() AND (OLD.token_hash IS DISTINCT FROM NEW.token_hash
          OR OLD.credential_id IS DISTINCT FROM NEW.credential_id OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.expires_at IS DISTINCT FROM NEW.expires_at))
        EXECUTE FUNCTION reblog_token_changed()`);
    await q.query(`
      CREATE TRIGGER oauth_tokens_deleted AFTER DELETE ON oauth_tokens
        FOR EACH ROW WHEN (OLD.kind = 'access' AND OLD.expires_at > now()) EXECUTE FUNCTION reblog_token_changed()`);
    await q.query(
      `CREATE TRIGGER credential_projects_changed AFTER UPDATE OR DELETE OR TRUNCATE ON credential_projects FOR EACH STATEMENT EXECUTE FUNCTION reblog_principals_changed()`,
    );
    await q.query(
      `CREATE TRIGGER account_members_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON account_members FOR EACH STATEMENT EXECUTE FUNCTION reblog_principals_changed()`,
    );
    await q.query(
      `CREATE TRIGGER project_members_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON project_members FOR EACH STATEMENT EXECUTE FUNCTION reblog_principals_changed()`,
    );
    await q.query(`
      CREATE TRIGGER users_disabled AFTER UPDATE OF disabled_at ON users
        FOR EACH ROW WHEN (OLD.disabled_at IS DISTINCT FROM NEW.disabled_at) EXECUTE FUNCTION reblog_principals_changed()`);
    await q.query(`
      CREATE TRIGGER projects_changed AFTER UPDATE OF account_id, name, disabled_tools ON projects
        FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id OR OLD.name IS DISTINCT FROM NEW.name OR OLD.disabled_tools IS DISTINCT FROM NEW.disabled_tools)
        EXECUTE FUNCTION reblog_principals_changed()`);
    await q.query(`CREATE TRIGGER projects_deleted AFTER DELETE OR TRUNCATE ON projects FOR EACH STATEMENT EXECUTE FUNCTION reblog_principals_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS projects_deleted ON projects`);
    await q.query(`DROP TRIGGER IF EXISTS projects_changed ON projects`);
    await q.query(`DROP TRIGGER IF EXISTS users_disabled ON users`);
    await q.query(`DROP TRIGGER IF EXISTS project_members_changed ON project_members`);
    await q.query(`DROP TRIGGER IF EXISTS account_members_changed ON account_members`);
    await q.query(`DROP TRIGGER IF EXISTS credential_projects_changed ON credential_projects`);
    await q.query(`DROP TRIGGER IF EXISTS oauth_tokens_deleted ON oauth_tokens`);
    await q.query(`DROP TRIGGER IF EXISTS oauth_tokens_changed ON oauth_tokens`);
    await q.query(`DROP TRIGGER IF EXISTS credentials_deleted ON credentials`);
    await q.query(`DROP TRIGGER IF EXISTS credentials_changed ON credentials`);
    await q.query(`DROP FUNCTION IF EXISTS reblog_token_changed()`);
    await q.query(`DROP FUNCTION IF EXISTS reblog_credential_changed()`);
    await q.query(`DROP FUNCTION IF EXISTS reblog_principals_changed()`);
  }
}
