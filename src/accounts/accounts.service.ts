import { AuditService } from '../audit/audit.service.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { MembersRepository } from '../users/members.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import type { Account } from './account.entity.js';
import { AccountsRepository } from './accounts.repository.js';

@Injectable()
export class AccountsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly users: UsersRepository,
    private readonly members: MembersRepository,
    private readonly audit: AuditService,
  ) {}

  /**
   * Creates the account with its owner: `owner_email` names a person (found whatever the case of the
   * email, created if new) who becomes the account's `owner` member, in the same transaction.
   */
  create(input: { name: string; owner_email: string }): Promise<Account> {
    return this.db.transaction(async (tx) => {
      const account = await this.accounts.insert(newId(), input, tx);
      // Inserted, or taken (by anyone, even by a transaction that commits while this insert waits): then read.
      const owner = (await this.users.insert(newId(), input.owner_email, null, tx)) ?? (await this.users.findByEmail(input.owner_email, tx));
      if (!owner) throw new Error(`The user ${input.owner_email} was neither inserted nor found.`);
      await this.members.upsertAccountMember(account.id, owner.id, 'owner', tx);
      await this.audit.record(tx, {
        action: 'account.created',
        accountId: account.id,
        target: { account_id: account.id, owner_user_id: owner.id },
        change: { after: { name: input.name, owner_email: owner.email } },
      });
      return account;
    });
  }

  async get(id: string): Promise<Account> {
    const account = await this.accounts.find(id);
    if (!account) throw DomainError.notFound('account', id);
    return account;
  }

  async isEmpty(): Promise<boolean> {
    return !(await this.accounts.any());
  }
}
