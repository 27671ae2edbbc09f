import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Every table of the product. Tenant data carries `account_id` so each query filters by tenant in SQL. */
export class InitialSchema1764500000000 implements MigrationInterface {
  name = 'InitialSchema1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);

    await q.query(`
      CREATE TABLE accounts (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        owner_email text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name text NOT NULL,
        disabled_tools text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, id)
      )`);
    await q.query(`CREATE INDEX projects_account_idx ON projects (account_id, id DESC)`);

    // API keys and OAuth grants are one kind of record: a bearer secret reaching projects with roles.
    await q.query(`
      CREATE TABLE credentials (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('api_key', 'grant')),
        name text NOT NULL,
        secret_hash bytea NOT NULL UNIQUE,
        secret_prefix text NOT NULL,
        scopes text[] NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credentials_account_idx ON credentials (account_id, type, id DESC)`);

    await q.query(`
      CREATE TABLE credential_projects (
        credential_id uuid NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        account_id uuid NOT NULL,
        role text NOT NULL CHECK (role IN ('viewer', 'editor', 'owner')),
        PRIMARY KEY (credential_id, project_id),
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE mcp_sessions (
        id text PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        credential_id uuid NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
        protocol_version text NOT NULL,
        client_name text,
        client_version text,
        created_at timestamptz NOT NULL DEFAULT now(),
        ended_at timestamptz
      )`);

    await q.query(`
      CREATE TABLE articles (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        project_id uuid NOT NULL,
        handle text NOT NULL,
        title text NOT NULL,
        excerpt text NOT NULL DEFAULT '',
        body text NOT NULL DEFAULT '',
        status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'published', 'archived')),
        tags text[] NOT NULL DEFAULT '{}',
        published_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        version integer NOT NULL DEFAULT 1,
        featured_image_id uuid,
        source text NOT NULL DEFAULT 'human' CHECK (source IN ('human', 'ai')),
        job_id uuid,
        agent_config_version integer,
        deleted_at timestamptz,
        deleted_by uuid,
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE
      )`);
    // A handle is unique among the live articles of a project; trashed ones give theirs up.
    await q.query(`CREATE UNIQUE INDEX articles_handle_uq ON articles (project_id, handle) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX articles_list_idx ON articles (project_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX articles_status_idx ON articles (project_id, status, updated_at DESC, id DESC) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX articles_title_trgm ON articles USING gin (lower(title) gin_trgm_ops)`);
    await q.query(`CREATE INDEX articles_handle_trgm ON articles USING gin (handle gin_trgm_ops)`);
    await q.query(`CREATE INDEX articles_tags_idx ON articles USING gin (tags)`);
    await q.query(`CREATE INDEX articles_trash_idx ON articles (project_id, deleted_at DESC) WHERE deleted_at IS NOT NULL`);
    await q.query(`CREATE INDEX articles_scheduled_idx ON articles (published_at) WHERE status = 'scheduled' AND deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE article_revisions (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        article_id uuid NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        version integer NOT NULL,
        snapshot jsonb NOT NULL,
        credential_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (article_id, version)
      )`);

    await q.query(`
      CREATE TABLE agent_configs (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        project_id uuid NOT NULL,
        agent text NOT NULL,
        version integer NOT NULL,
        answers jsonb NOT NULL,
        credential_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, agent, version),
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE jobs (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        project_id uuid NOT NULL,
        credential_id uuid,
        tool text NOT NULL,
        args jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        progress real NOT NULL DEFAULT 0,
        result jsonb,
        error jsonb,
        attempts integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL DEFAULT 3,
        run_after timestamptz NOT NULL DEFAULT now(),
        locked_by text,
        locked_until timestamptz,
        cancel_requested boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX jobs_account_idx ON jobs (account_id, id DESC)`);
    await q.query(`CREATE INDEX jobs_project_idx ON jobs (project_id, id DESC)`);
    await q.query(`CREATE INDEX jobs_claim_idx ON jobs (run_after) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX jobs_lease_idx ON jobs (locked_until) WHERE status = 'running'`);

    await q.query(`
      CREATE TABLE media (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        project_id uuid NOT NULL,
        job_id uuid,
        mime_type text NOT NULL,
        width integer NOT NULL,
        height integer NOT NULL,
        size integer NOT NULL,
        data bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE
      )`);
    // A job that runs twice stores its image once.
    await q.query(`CREATE UNIQUE INDEX media_job_uq ON media (job_id) WHERE job_id IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX articles_job_uq ON articles (job_id) WHERE job_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE activity_log (
        id uuid PRIMARY KEY,
        at timestamptz NOT NULL,
        account_id uuid NOT NULL,
        credential_type text NOT NULL,
        credential_id uuid NOT NULL,
        credential_name text NOT NULL,
        client_name text,
        client_version text,
        session_id text,
        method text NOT NULL,
        tool text,
        project_id uuid,
        outcome text NOT NULL,
        error jsonb,
        duration_ms integer NOT NULL,
        count integer NOT NULL DEFAULT 1
      )`);
    await q.query(`CREATE INDEX activity_account_idx ON activity_log (account_id, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'activity_log',
      'media',
      'jobs',
      'agent_configs',
      'article_revisions',
      'articles',
      'mcp_sessions',
      'credential_projects',
      'credentials',
      'projects',
      'accounts',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
