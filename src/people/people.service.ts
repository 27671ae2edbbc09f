import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { DatabaseNotifications } from '../database/notifications.service.js';
import type { AccountRole, User } from '../users/user.js';
import { UsersRepository } from '../users/users.repository.js';

/** A user with the accounts they belong to. */
export interface UserWithAccounts extends User {
  accounts: { account_id: string; role: AccountRole }[];
}

/** People as the operator manages them: added by email, renamed, disabled. */
@Injectable()
export class PeopleService {
  constructor(
    private readonly users: UsersRepository,
    private readonly notifications: DatabaseNotifications,
    private readonly audit: AuditService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** A new person; `conflict` when the email is taken in any case (the unique index decides, so two at once cannot both win). */
  async create(input: { email: string; name?: string }): Promise<User> {
    const user = await this.db.transaction(async (tx) => {
      const inserted = await this.users.insert(newId(), input.email, input.name ?? null, tx);
      if (inserted) {
        await this.audit.record(tx, {
          action: 'user.created',
          accountId: null,
          target: { user_id: inserted.id },
          change: { after: { email: inserted.email, name: inserted.name } },
        });
      }
      return inserted;
    });
    if (user) return user;
    const existing = await this.users.findByEmail(input.email);
    throw new DomainError(
      'conflict',
      `A user with the email ${input.email.toLowerCase()} exists already${existing ? ` (id ${existing.id})` : ''}; emails are unique whatever their case.`,
      existing ? { user_id: existing.id } : undefined,
    );
  }

  /** The person with this email (any case), made now if there is none; two at once both get the one made. */
  async findOrCreate(email: string): Promise<User> {
    const made = await this.create({ email }).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === 'conflict') return null;
      throw err;
    });
    const person = made ?? (await this.users.findByEmail(email));
    if (!person) throw new DomainError('conflict', `The person with the email ${email.toLowerCase()} was removed while being added; try again.`);
    return person;
  }

  /** Every user, newest first, or the one with `email` (any case). */
  async list(email: string | undefined, limit = 50, cursor?: string): Promise<Page<User>> {
    return toPage(await this.users.page(email, limit + 1, decodeCursor(cursor)), limit, (u) => u);
  }

  async get(id: string): Promise<UserWithAccounts> {
    const user = await this.users.find(id);
    if (!user) throw DomainError.notFound('user', id);
    const accounts = (await this.users.memberships(id)).map(({ account_id, role }) => ({ account_id, role }));
    return { ...user, accounts };
  }

  /**
   * Renames or disables (enables) a person. Disabling ends what their grants reach at their next
   * request, on every instance: the database tells every instance when it commits, and this one
   * answers once it heard.
   */
  async update(id: string, input: { name?: string | null; disabled?: boolean }): Promise<User> {
    const user = await this.db.transaction(async (tx) => {
      const before = await this.users.find(id, tx, true);
      const after = before && (await this.users.update(id, input, tx));
      if (!before || !after) throw DomainError.notFound('user', id);
      await this.audit.record(tx, {
        action: 'user.updated',
        accountId: null,
        target: { user_id: id },
        change: { before: { name: before.name, disabled: before.disabled_at !== null }, after: { name: after.name, disabled: after.disabled_at !== null } },
      });
      return after;
    });
    if (input.disabled !== undefined) await this.notifications.caughtUp();
    return user;
  }
}
