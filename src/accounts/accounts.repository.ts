import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, sql, type Queryable } from '../database/sql.js';
import type { Account } from './account.entity.js';

const insert = sql<[id: string, name: string, ownerEmail: string], Account>(
  'accounts.insert',
  `INSERT INTO accounts (id, name, owner_email, created_at) VALUES ($1, $2, $3, now()) RETURNING *`,
);
const findById = sql<[id: string], Account>('accounts.find_by_id', `SELECT * FROM accounts WHERE id = $1`);
const any = sql<[], { one: number }>('accounts.any', `SELECT 1 AS one FROM accounts LIMIT 1`);

/** The statements of `accounts`. */
@Injectable()
export class AccountsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(id: string, input: { name: string; owner_email: string }, db: Queryable = this.db): Promise<Account> {
    return (await row(db, insert, [id, input.name, input.owner_email]))!;
  }

  find(id: string, db: Queryable = this.db): Promise<Account | null> {
    return row(db, findById, [id]);
  }

  async any(db: Queryable = this.db): Promise<boolean> {
    return (await row(db, any, [])) !== null;
  }
}
