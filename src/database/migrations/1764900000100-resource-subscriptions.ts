import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `resources/subscribe` (docs/protocol.md#resources-prompts-completions-and-logging): which session watches which URI, in
 * Postgres so that any instance may take the subscription and the instance holding the session's
 * GET stream writes the update. A session's subscriptions go with it (purge deletes ended sessions).
 *
 * `article_id` is the article a product URI named when it was subscribed (null for media and for
 * resources other modules contribute). A row trigger on `articles` sends its id on
 * `reblog_resources` (see RESOURCES_CHANNEL) after any UPDATE or DELETE — tools, jobs, console,
 * scheduled publishing, trash, featured image all change the row — but only when a subscription to
 * it exists (one probe of the partial index), so articles nobody watches cost nothing more.
 * pg_notify folds equal payloads of one transaction into one.
 */
export class ResourceSubscriptions1764900000100 implements MigrationInterface {
  name = 'ResourceSubscriptions1764900000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_resource_subscriptions (
        session_id text NOT NULL REFERENCES mcp_sessions(id) ON DELETE CASCADE,
        uri text NOT NULL,
        article_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, uri)
      )`);
    await q.query(`CREATE INDEX mcp_resource_subscriptions_article_idx ON mcp_resource_subscriptions (article_id) WHERE article_id IS NOT NULL`);
    await q.query(`
      CREATE FUNCTION articles_resource_updated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM mcp_resource_subscriptions WHERE article_id = OLD.id) THEN
          PERFORM pg_notify('reblog_resources', OLD.id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER articles_resource_updated AFTER UPDATE OR DELETE ON articles FOR EACH ROW EXECUTE FUNCTION articles_resource_updated()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS articles_resource_updated ON articles`);
    await q.query(`DROP FUNCTION IF EXISTS articles_resource_updated()`);
    await q.query(`DROP TABLE IF EXISTS mcp_resource_subscriptions`);
  }
}
