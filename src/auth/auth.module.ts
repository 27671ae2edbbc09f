import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { CredentialsRepository } from './credentials.repository.js';
import { CredentialsService } from './credentials.service.js';
import { PrincipalResolver } from './principal.resolver.js';

@Module({
  imports: [AccountsModule, ProjectsModule, AuditModule],
  providers: [CredentialsService, CredentialsRepository, PrincipalResolver],
  // The OAuth module makes, narrows and revokes its grants through CredentialsService: one way into the credentials table.
  exports: [CredentialsService, PrincipalResolver],
})
export class AuthModule {}
