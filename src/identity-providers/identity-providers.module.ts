import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { IdentityProvidersRepository } from './identity-providers.repository.js';
import { IdentityProvidersService } from './identity-providers.service.js';

/** The identity providers each account trusts: their issuers, discovery documents and keys (docs/oauth.md#enterprise-managed-authorization). */
@Module({
  imports: [AccountsModule, AuditModule],
  providers: [IdentityProvidersService, IdentityProvidersRepository],
  exports: [IdentityProvidersService],
})
export class IdentityProvidersModule {}
