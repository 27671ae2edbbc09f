import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, rows, sql, type Queryable } from '../database/sql.js';
import type { AccountMember, AccountRole, Listed, ProjectMember } from './user.js';

type ProjectRole = ProjectMember['role'];

/** Where a row stands in a members list: its creation time to the microsecond, as text a cursor can carry. */
const POSITION = `to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

// Every member row of an account, locked until the transaction ends, so that two changes that could
// each leave the account without an owner run one after the other (in one order: no deadlock).
const LOCK_ACCOUNT_MEMBERS = sql<[accountId: string], AccountMember>(
  'account_members.lock',
  `SELECT account_id, user_id, role FROM account_members WHERE account_id = $1 ORDER BY user_id FOR UPDATE`,
);

const UPSERT_ACCOUNT_MEMBER = sql<[accountId: string, userId: string, role: AccountRole], AccountMember>(
  'account_members.upsert',
  `INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3)
   ON CONFLICT (account_id, user_id) DO UPDATE SET role = EXCLUDED.role
   RETURNING account_id, user_id, role`,
);

// The person's project memberships in the account go with it (foreign key, ON DELETE CASCADE).
const DELETE_ACCOUNT_MEMBER = sql<[accountId: string, userId: string]>(
  'account_members.delete',
  `DELETE FROM account_members WHERE account_id = $1 AND user_id = $2`,
);

const ACCOUNT_MEMBERS_PAGE = sql<[accountId: string, beforeAt: string | null, beforeUser: string | null, limit: number], Listed<AccountMember>>(
  'account_members.page',
  `SELECT m.account_id, m.user_id, u.email, m.role, ${POSITION} AS position
     FROM account_members m JOIN users u ON u.id = m.user_id
    WHERE m.account_id = $1 AND ($2::timestamptz IS NULL OR (m.created_at, m.user_id) < ($2::timestamptz, $3::uuid))
    ORDER BY m.created_at DESC, m.user_id DESC LIMIT $4`,
);

// Only for a member of the project's account, whose membership row is held (KEY SHARE) so that it
// cannot be deleted under this insert; no row when the person is not (or no longer) a member.
const UPSERT_PROJECT_MEMBER = sql<[projectId: string, accountId: string, userId: string, role: ProjectRole], ProjectMember>(
  'project_members.upsert',
  `INSERT INTO project_members (project_id, account_id, user_id, role)
   SELECT $1, am.account_id, am.user_id, $4
     FROM (SELECT account_id, user_id FROM account_members WHERE account_id = $2 AND user_id = $3 FOR KEY SHARE) am
   ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role
   RETURNING project_id, user_id, role`,
);

// The person's role on the project, locked until the transaction ends.
const PROJECT_ROLE = sql<[projectId: string, userId: string], { role: ProjectRole }>(
  'project_members.role',
  `SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2 FOR UPDATE`,
);

const DELETE_PROJECT_MEMBER = sql<[projectId: string, userId: string]>(
  'project_members.delete',
  `DELETE FROM project_members WHERE project_id = $1 AND user_id = $2`,
);

const PROJECT_MEMBERS_PAGE = sql<[projectId: string, beforeAt: string | null, beforeUser: string | null, limit: number], Listed<ProjectMember>>(
  'project_members.page',
  `SELECT m.project_id, m.user_id, u.email, m.role, ${POSITION} AS position
     FROM project_members m JOIN users u ON u.id = m.user_id
    WHERE m.project_id = $1 AND ($2::timestamptz IS NULL OR (m.created_at, m.user_id) < ($2::timestamptz, $3::uuid))
    ORDER BY m.created_at DESC, m.user_id DESC LIMIT $4`,
);

/** Where a members page starts: after the row at this position (creation time and user id). */
export interface MemberCursor {
  at: string;
  userId: string;
}

/** The statements of `account_members` and `project_members`. */
@Injectable()
export class MembersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Every member of the account, locked for the caller's transaction. */
  lockAccountMembers(accountId: string, db: Queryable): Promise<AccountMember[]> {
    return rows(db, LOCK_ACCOUNT_MEMBERS, [accountId]);
  }

  async upsertAccountMember(accountId: string, userId: string, role: AccountRole, db: Queryable = this.db): Promise<AccountMember> {
    return (await row(db, UPSERT_ACCOUNT_MEMBER, [accountId, userId, role]))!;
  }

  /** Whether there was such a membership. */
  async deleteAccountMember(accountId: string, userId: string, db: Queryable = this.db): Promise<boolean> {
    return (await affected(db, DELETE_ACCOUNT_MEMBER, [accountId, userId])) > 0;
  }

  /** Up to `limit` members of the account, newest membership first, after `cursor` when given. */
  accountMembers(accountId: string, limit: number, cursor?: MemberCursor, db: Queryable = this.db): Promise<Listed<AccountMember>[]> {
    return rows(db, ACCOUNT_MEMBERS_PAGE, [accountId, cursor?.at ?? null, cursor?.userId ?? null, limit]);
  }

  /** Sets the person's role on the project; null when they are not a member of the project's account. */
  upsertProjectMember(projectId: string, accountId: string, userId: string, role: ProjectRole, db: Queryable = this.db): Promise<ProjectMember | null> {
    return row(db, UPSERT_PROJECT_MEMBER, [projectId, accountId, userId, role]);
  }

  /** Whether there was such a membership. */
  /** The person's role on the project (null: none), locked for the caller's transaction. */
  async projectRole(projectId: string, userId: string, db: Queryable): Promise<ProjectRole | null> {
    return (await row(db, PROJECT_ROLE, [projectId, userId]))?.role ?? null;
  }

  async deleteProjectMember(projectId: string, userId: string, db: Queryable = this.db): Promise<boolean> {
    return (await affected(db, DELETE_PROJECT_MEMBER, [projectId, userId])) > 0;
  }

  /** Up to `limit` members of the project, newest membership first, after `cursor` when given. */
  projectMembers(projectId: string, limit: number, cursor?: MemberCursor, db: Queryable = this.db): Promise<Listed<ProjectMember>[]> {
    return rows(db, PROJECT_MEMBERS_PAGE, [projectId, cursor?.at ?? null, cursor?.userId ?? null, limit]);
  }
}
