import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, rows, sql, type Queryable } from '../database/sql.js';
import type { Membership, ProjectRoleRow, User } from './user.js';

const USER_COLUMNS = 'id, email, name, disabled_at, created_at';

const INSERT = sql<[id: string, email: string, name: string | null], User>(
  'users.insert',
  `INSERT INTO users (id, email, name) VALUES ($1, lower($2), $3) ON CONFLICT (email) DO NOTHING RETURNING ${USER_COLUMNS}`,
);
const FIND = sql<[id: string], User>('users.find', `SELECT ${USER_COLUMNS} FROM users WHERE id = $1`);
const FIND_BY_EMAIL = sql<[email: string], User>('users.find_by_email', `SELECT ${USER_COLUMNS} FROM users WHERE email = lower($1)`);

const MEMBERSHIPS = sql<[userId: string], Membership>(
  'users.memberships',
  `SELECT m.account_id, a.name AS account_name, m.role
     FROM account_members m JOIN accounts a ON a.id = m.account_id
    WHERE m.user_id = $1
    ORDER BY a.created_at, a.id`,
);

const PROJECT_ROLES = sql<[userId: string, accountId: string], ProjectRoleRow>(
  'users.project_roles',
  `SELECT p.id AS project_id, p.name, CASE WHEN am.role = 'owner' THEN 'owner' ELSE pm.role END AS role
     FROM account_members am
     JOIN projects p ON p.account_id = am.account_id
     LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = am.user_id
    WHERE am.user_id = $1 AND am.account_id = $2 AND (am.role = 'owner' OR pm.role IS NOT NULL)
    ORDER BY p.id`,
);

/** The statements of `users`, and what a person may reach through `account_members` and `project_members`. */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the user, or answers null when the email (any case) is taken. */
  insert(id: string, email: string, name: string | null, db: Queryable = this.db): Promise<User | null> {
    return row(db, INSERT, [id, email, name]);
  }

  find(id: string, db: Queryable = this.db): Promise<User | null> {
    return row(db, FIND, [id]);
  }

  findByEmail(email: string, db: Queryable = this.db): Promise<User | null> {
    return row(db, FIND_BY_EMAIL, [email]);
  }

  /** The accounts a person belongs to, oldest first. */
  memberships(userId: string, db: Queryable = this.db): Promise<Membership[]> {
    return rows(db, MEMBERSHIPS, [userId]);
  }

  /** The projects of one account where a person has a role, with their effective role. */
  projectRoles(userId: string, accountId: string, db: Queryable = this.db): Promise<ProjectRoleRow[]> {
    return rows(db, PROJECT_ROLES, [userId, accountId]);
  }
}
