import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, rows, sql, type Queryable } from '../database/sql.js';
import type { Project } from './project.entity.js';

const insert = sql<[id: string, accountId: string, name: string, disabledTools: string[]], Project>(
  'projects.insert',
  `INSERT INTO projects (id, account_id, name, disabled_tools, created_at, updated_at) VALUES ($1, $2, $3, $4, now(), now()) RETURNING *`,
);
const findById = sql<[id: string], Project>('projects.find_by_id', `SELECT * FROM projects WHERE id = $1`);
const lockById = sql<[id: string], Project>('projects.lock_by_id', `SELECT * FROM projects WHERE id = $1 FOR UPDATE`);
const listFirst = sql<[accountId: string, limit: number], Project>(
  'projects.list_first',
  `SELECT * FROM projects WHERE account_id = $1 ORDER BY id DESC LIMIT $2`,
);
const listAfter = sql<[accountId: string, limit: number, afterId: string], Project>(
  'projects.list_after',
  `SELECT * FROM projects WHERE account_id = $1 AND id < $3 ORDER BY id DESC LIMIT $2`,
);
const update = sql<[id: string, name: string | null, disabledTools: string[] | null], Project>(
  'projects.update',
  `UPDATE projects SET name = coalesce($2, name), disabled_tools = coalesce($3::text[], disabled_tools), updated_at = now() WHERE id = $1 RETURNING *`,
);
// The principal lookup: which of a credential's projects still belong to its account.
const findOwned = sql<[accountId: string, ids: string[]], Project>('projects.find_owned', `SELECT * FROM projects WHERE account_id = $1 AND id = ANY($2)`, {
  hot: true,
});

/** The statements of `projects`. */
@Injectable()
export class ProjectsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(id: string, accountId: string, name: string, disabledTools: string[], db: Queryable = this.db): Promise<Project> {
    return (await row(db, insert, [id, accountId, name, disabledTools]))!;
  }

  /** The project; locked for the caller's transaction `db` when `lock`. */
  find(id: string, db: Queryable = this.db, lock = false): Promise<Project | null> {
    return row(db, lock ? lockById : findById, [id]);
  }

  /** Up to `limit` projects of the account, newest first, after the id `after` when given. */
  list(accountId: string, limit: number, after?: string, db: Queryable = this.db): Promise<Project[]> {
    return after === undefined ? rows(db, listFirst, [accountId, limit]) : rows(db, listAfter, [accountId, limit, after]);
  }

  /** Sets the fields given (null: unchanged); null when the project is gone. */
  update(id: string, fields: { name: string | null; disabled_tools: string[] | null }, db: Queryable = this.db): Promise<Project | null> {
    return row(db, update, [id, fields.name, fields.disabled_tools]);
  }

  findOwned(accountId: string, ids: string[], db: Queryable = this.db): Promise<Project[]> {
    return rows(db, findOwned, [accountId, ids]);
  }
}
