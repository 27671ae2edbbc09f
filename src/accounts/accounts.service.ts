import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import type { Account } from './account.entity.js';
import { AccountsRepository } from './accounts.repository.js';

@Injectable()
export class AccountsService {
  constructor(private readonly accounts: AccountsRepository) {}

  create(input: { name: string; owner_email: string }): Promise<Account> {
    return this.accounts.insert(newId(), input);
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
