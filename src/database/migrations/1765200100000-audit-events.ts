import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail of administrative acts (docs/admin-api.md#audit-trail): one row per act, written in
 * the act's own transaction. Append-only: an UPDATE or a TRUNCATE raises, and a DELETE raises for a
 * row of the last day, so only the retention purge (rows older than the retention, which is at least
 * a day) removes anything. `account_id` is null for acts outside any account (a person's name or
 * state, which the operator's trail shows); it has no foreign key, so the trail outlives what it names.
 */
export class AuditEvents1765200100000 implements MigrationInterface {
  name = 'AuditEvents1765200100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_events (
        id uuid PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        account_id uuid,
        actor_type text NOT NULL CHECK (actor_type IN ('operator', 'user', 'client', 'credential', 'system')),
        actor_id text,
        actor_email text,
        action text NOT NULL,
        target jsonb NOT NULL DEFAULT '{}'::jsonb,
        change jsonb NOT NULL DEFAULT '{}'::jsonb,
        ip text,
        user_agent text,
        request_id text
      )`);
    await q.query(`CREATE INDEX audit_events_account_at ON audit_events (account_id, at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_events_at ON audit_events (at DESC, id DESC)`);
    await q.query(`
      CREATE FUNCTION reblog_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND OLD.at < now() - interval '1 day' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION reblog_audit_append_only()`);
    await q.query(`CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION reblog_audit_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
    await q.query(`DROP FUNCTION reblog_audit_append_only()`);
  }
}
