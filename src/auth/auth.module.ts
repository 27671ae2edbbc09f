import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { CredentialsRepository } from './credentials.repository.js';
import { CredentialsService } from './credentials.service.js';
import { PrincipalResolver } from './principal.resolver.js';

@Module({
  imports: [AccountsModule, ProjectsModule],
  providers: [CredentialsService, CredentialsRepository, PrincipalResolver],
  // The OAuth module writes its grants through the same repository: one place for the credentials table.
  exports: [CredentialsService, CredentialsRepository, PrincipalResolver],
})
export class AuthModule {}
