import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, sql, type Queryable } from '../database/sql.js';

// The owner as a person and an owner member of the account, whether or not creating the account made
// them already: an existing user (any case) is kept as they are.
const ENSURE_OWNER = sql<[id: string, email: string, accountId: string], { id: string }>(
  'demo.ensure_owner',
  `WITH person AS (
     INSERT INTO users (id, email) VALUES ($1, lower($2))
     ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
     RETURNING id
   ), member AS (
     INSERT INTO account_members (account_id, user_id, role) SELECT $3, id, 'owner' FROM person
     ON CONFLICT (account_id, user_id) DO NOTHING
   )
   SELECT id FROM person`,
);

/** The demo tenant's owner, as a person who can sign in. */
@Injectable()
export class DemoOwnerRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Makes sure `email` is a user and an owner of the account; answers the user's id. */
  async ensureOwner(id: string, email: string, accountId: string, db: Queryable = this.db): Promise<string> {
    return (await row(db, ENSURE_OWNER, [id, email, accountId]))!.id;
  }
}
