import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who made what in the owners' console. A sign-in link made there names the account it was made from
 * and the owner who made it (it signs in only while that owner still owns every account of its
 * person); an API key names the person who made it (null: the operator, with the admin token). A
 * key's `created_by` has no foreign key: it stays a record of who made it after that person is gone.
 */
export class ConsoleAccountability1765000000000 implements MigrationInterface {
  name = 'ConsoleAccountability1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE login_links
        ADD COLUMN account_id uuid REFERENCES accounts(id) ON DELETE CASCADE,
        ADD COLUMN created_by uuid REFERENCES users(id) ON DELETE CASCADE,
        ADD CONSTRAINT login_links_made_in_console CHECK ((account_id IS NULL) = (created_by IS NULL))`);
    await q.query(`ALTER TABLE credentials ADD COLUMN created_by uuid`);
    // An OAuth grant is made by its person's consent.
    await q.query(`UPDATE credentials SET created_by = user_id WHERE source = 'oauth'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE credentials DROP COLUMN created_by`);
    await q.query(`ALTER TABLE login_links DROP CONSTRAINT login_links_made_in_console, DROP COLUMN created_by, DROP COLUMN account_id`);
  }
}
