import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service.js';
import { AuditService } from '../audit/audit.service.js';
import { DomainError } from '../common/domain-error.js';
import { isUuid } from '../common/ids.js';
import type { Page } from '../common/pagination.js';
import { DatabaseNotifications } from '../database/notifications.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import { MembersRepository, type MemberCursor } from '../users/members.repository.js';
import type { AccountMember, AccountRole, Listed, ProjectMember } from '../users/user.js';
import { UsersRepository } from '../users/users.repository.js';

/**
 * Who belongs to an account and with which role on its projects. Every change reaches the grants of
 * the person at their next request, on every instance: the membership tables' triggers tell every
 * instance when the change commits, and this one answers once it heard.
 */
@Injectable()
export class MembershipsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly members: MembersRepository,
    private readonly users: UsersRepository,
    private readonly accounts: AccountsService,
    private readonly projects: ProjectsService,
    private readonly notifications: DatabaseNotifications,
    private readonly audit: AuditService,
  ) {}

  /** Adds the person to the account or changes their role; never demotes the last owner. */
  async putAccountMember(accountId: string, userId: string, role: AccountRole): Promise<AccountMember> {
    await this.accounts.get(accountId);
    await this.user(userId);
    const member = await this.db.transaction(async (tx) => {
      const members = await this.members.lockAccountMembers(accountId, tx);
      if (role !== 'owner' && isLastOwner(members, userId)) throw lastOwner(accountId, userId, 'demote');
      const before = members.find((m) => m.user_id === userId)?.role ?? null;
      const member = await this.members.upsertAccountMember(accountId, userId, role, tx);
      await this.audit.record(tx, {
        action: 'account_member.put',
        accountId,
        target: { user_id: userId },
        change: { before: { role: before }, after: { role } },
      });
      return member;
    });
    await this.notifications.caughtUp();
    return member;
  }

  /** Removes the person from the account, and so from its projects; never the last owner. */
  async deleteAccountMember(accountId: string, userId: string): Promise<void> {
    await this.accounts.get(accountId);
    await this.user(userId);
    await this.db.transaction(async (tx) => {
      const members = await this.members.lockAccountMembers(accountId, tx);
      if (!members.some((m) => m.user_id === userId)) throw new DomainError('not_found', `User ${userId} is not a member of account ${accountId}.`);
      if (isLastOwner(members, userId)) throw lastOwner(accountId, userId, 'remove');
      await this.members.deleteAccountMember(accountId, userId, tx);
      await this.audit.record(tx, {
        action: 'account_member.removed',
        accountId,
        target: { user_id: userId },
        change: { before: { role: members.find((m) => m.user_id === userId)!.role }, after: null },
      });
    });
    await this.notifications.caughtUp();
  }

  async listAccountMembers(accountId: string, limit = 50, cursor?: string): Promise<Page<Omit<Listed<AccountMember>, 'position'>>> {
    await this.accounts.get(accountId);
    return membersPage(await this.members.accountMembers(accountId, limit + 1, decodeMemberCursor(cursor)), limit);
  }

  /** Gives a member of the project's account a role on the project; `unprocessable` for anyone else. */
  async putProjectMember(projectId: string, userId: string, role: ProjectMember['role']): Promise<ProjectMember> {
    const project = await this.projects.get(projectId);
    await this.user(userId);
    const member = await this.db.transaction(async (tx) => {
      const before = await this.members.projectRole(projectId, userId, tx);
      const upserted = await this.members.upsertProjectMember(projectId, project.account_id, userId, role, tx);
      if (upserted) {
        await this.audit.record(tx, {
          action: 'project_member.put',
          accountId: project.account_id,
          target: { project_id: projectId, user_id: userId },
          change: { before: { role: before }, after: { role } },
        });
      }
      return upserted;
    });
    if (!member) {
      throw new DomainError(
        'unprocessable',
        `User ${userId} is not a member of account ${project.account_id}, which project ${projectId} belongs to; add them with PUT /admin/v1/accounts/${project.account_id}/members/${userId} first.`,
      );
    }
    await this.notifications.caughtUp();
    return member;
  }

  async deleteProjectMember(projectId: string, userId: string): Promise<void> {
    const project = await this.projects.get(projectId);
    await this.user(userId);
    await this.db.transaction(async (tx) => {
      const before = await this.members.projectRole(projectId, userId, tx);
      if (!before || !(await this.members.deleteProjectMember(projectId, userId, tx)))
        throw new DomainError('not_found', `User ${userId} is not a member of project ${projectId}.`);
      await this.audit.record(tx, {
        action: 'project_member.removed',
        accountId: project.account_id,
        target: { project_id: projectId, user_id: userId },
        change: { before: { role: before }, after: null },
      });
    });
    await this.notifications.caughtUp();
  }

  async listProjectMembers(projectId: string, limit = 50, cursor?: string): Promise<Page<Omit<Listed<ProjectMember>, 'position'>>> {
    await this.projects.get(projectId);
    return membersPage(await this.members.projectMembers(projectId, limit + 1, decodeMemberCursor(cursor)), limit);
  }

  private async user(id: string): Promise<void> {
    if (!(await this.users.find(id))) throw DomainError.notFound('user', id);
  }
}

/** Whether `userId` is the only owner among `members`. */
function isLastOwner(members: AccountMember[], userId: string): boolean {
  const owners = members.filter((m) => m.role === 'owner');
  return owners.length === 1 && owners[0].user_id === userId;
}

function lastOwner(accountId: string, userId: string, verb: 'demote' | 'remove'): DomainError {
  return new DomainError('conflict', `User ${userId} is the last owner of account ${accountId}; make another member an owner before you ${verb} them.`);
}

/** A page of members from `limit + 1` rows; the cursor carries the last row's position (time and user id). */
function membersPage<M extends { user_id: string }>(rows: Listed<M>[], limit: number): Page<Omit<Listed<M>, 'position'>> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    items: items.map(({ position: _position, ...member }) => member),
    next_cursor: more ? Buffer.from(`${last.position} ${last.user_id}`, 'utf8').toString('base64url') : null,
  };
}

const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function decodeMemberCursor(cursor: string | undefined): MemberCursor | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const [at, userId, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(' ');
  if (rest.length || !POSITION.test(at ?? '') || !isUuid(userId))
    throw new DomainError('validation_failed', 'The cursor is not one this API returned; start again without it.');
  return { at, userId };
}
