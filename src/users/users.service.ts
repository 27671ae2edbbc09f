import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error.js';
import type { Membership, ProjectRoleRow, User } from './user.js';
import { UsersRepository } from './users.repository.js';

/** People: who they are, which accounts they belong to, and their effective role on each project. */
@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  async get(id: string): Promise<User> {
    const user = await this.users.find(id);
    if (!user) throw DomainError.notFound('user', id);
    return user;
  }

  /** The user with this email (any case), or null. */
  findByEmail(email: string): Promise<User | null> {
    return this.users.findByEmail(email);
  }

  /** The person an identity provider's issuer and subject are bound to (their OIDC sign-in), or null. */
  findByOidcSubject(issuer: string, subject: string): Promise<User | null> {
    return this.users.findByOidcSubject(issuer, subject);
  }

  memberships(userId: string): Promise<Membership[]> {
    return this.users.memberships(userId);
  }

  /** A person's effective role on each project of an account where they have one. */
  projectRoles(userId: string, accountId: string): Promise<ProjectRoleRow[]> {
    return this.users.projectRoles(userId, accountId);
  }
}
