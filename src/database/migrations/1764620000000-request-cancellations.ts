import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `notifications/cancelled` can overtake the call it cancels: the gateway may deliver it to
 * another instance before the call has created its job. The cancellation is remembered here (for
 * calls in a session, whose request ids are never reused), and a call that creates its job looks
 * for it; remembered cancellations expire after an hour.
 */
export class RequestCancellations1764620000000 implements MigrationInterface {
  name = 'RequestCancellations1764620000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE request_cancellations (
        credential_id uuid NOT NULL,
        request_key text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (credential_id, request_key)
      )`);
    await q.query(`CREATE INDEX request_cancellations_at_idx ON request_cancellations (at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS request_cancellations`);
  }
}
