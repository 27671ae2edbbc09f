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
const LOCK = sql<[id: string], User>('users.lock', `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 FOR UPDATE`);
// The person an identity provider's issuer and subject are bound to (by their first OIDC sign-in).
const FIND_BY_OIDC_SUBJECT = sql<[issuer: string, subject: string], User>(
  'users.find_by_oidc_subject',
  `SELECT ${USER_COLUMNS} FROM users WHERE oidc_issuer = $1 AND oidc_subject = $2`,
);
const FIND_BY_EMAIL = sql<[email: string], User>('users.find_by_email', `SELECT ${USER_COLUMNS} FROM users WHERE email = lower($1)`);

// The admin list: every user, or the one with an email (any case); newest first, after a cursor's id.
const PAGE = sql<[email: string | null, after: string | null, limit: number], User>(
  'users.page',
  `SELECT ${USER_COLUMNS} FROM users
    WHERE ($1::text IS NULL OR email = lower($1)) AND ($2::uuid IS NULL OR id < $2)
    ORDER BY id DESC LIMIT $3`,
);

// Null leaves a field as it is; disabling keeps the first disabled_at.
const UPDATE = sql<[id: string, setName: boolean, name: string | null, disabled: boolean | null], User>(
  'users.update',
  `UPDATE users
      SET name = CASE WHEN $2 THEN $3 ELSE name END,
          disabled_at = CASE WHEN $4::boolean IS NULL THEN disabled_at WHEN $4 THEN coalesce(disabled_at, now()) ELSE NULL END
    WHERE id = $1
   RETURNING ${USER_COLUMNS}`,
);

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

  /** The user; locked for the caller's transaction `db` when `lock`. */
  find(id: string, db: Queryable = this.db, lock = false): Promise<User | null> {
    return row(db, lock ? LOCK : FIND, [id]);
  }

  findByOidcSubject(issuer: string, subject: string, db: Queryable = this.db): Promise<User | null> {
    return row(db, FIND_BY_OIDC_SUBJECT, [issuer, subject]);
  }

  findByEmail(email: string, db: Queryable = this.db): Promise<User | null> {
    return row(db, FIND_BY_EMAIL, [email]);
  }

  /** Up to `limit` users, newest first, older than `after` when given, only the one with `email` (any case) when given. */
  page(email: string | undefined, limit: number, after?: string, db: Queryable = this.db): Promise<User[]> {
    return rows(db, PAGE, [email ?? null, after ?? null, limit]);
  }

  /**
   * Sets the name (when `name` is not undefined; null clears it) and the disabled state (when
   * `disabled` is given); null when there is no such user.
   */
  update(id: string, fields: { name?: string | null; disabled?: boolean }, db: Queryable = this.db): Promise<User | null> {
    return row(db, UPDATE, [id, fields.name !== undefined, fields.name ?? null, fields.disabled ?? null]);
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
