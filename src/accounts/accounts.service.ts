import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { Account } from './account.entity.js';

@Injectable()
export class AccountsService {
  constructor(@InjectRepository(Account) private readonly accounts: Repository<Account>) {}

  async create(input: { name: string; owner_email: string }): Promise<Account> {
    const account = this.accounts.create({ id: newId(), ...input, created_at: new Date() });
    return this.accounts.save(account);
  }

  async get(id: string): Promise<Account> {
    const account = await this.accounts.findOneBy({ id });
    if (!account) throw DomainError.notFound('account', id);
    return account;
  }

  async isEmpty(): Promise<boolean> {
    return !(await this.accounts.exists());
  }
}
