import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { PeopleModule } from '../people/people.module.js';
import { UsersModule } from '../users/users.module.js';
import { EnterpriseAccessService } from './enterprise-access.service.js';
import { IdJagUsesRepository } from './id-jag-uses.repository.js';
import { IdentityProvidersRepository } from './identity-providers.repository.js';
import { IdentityProvidersService } from './identity-providers.service.js';

/** The identity providers each account trusts: their issuers, discovery documents and keys (docs/oauth.md#enterprise-managed-authorization). */
@Module({
  imports: [AccountsModule, AuditModule, UsersModule, PeopleModule],
  providers: [IdentityProvidersService, IdentityProvidersRepository, EnterpriseAccessService, IdJagUsesRepository],
  exports: [IdentityProvidersService, EnterpriseAccessService],
})
export class IdentityProvidersModule {}
