import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { Credential, CredentialProject } from './credential.entity.js';
import { CredentialsService } from './credentials.service.js';
import { PrincipalResolver } from './principal.resolver.js';

@Module({
  imports: [TypeOrmModule.forFeature([Credential, CredentialProject]), AccountsModule, ProjectsModule],
  providers: [CredentialsService, PrincipalResolver],
  exports: [CredentialsService, PrincipalResolver],
})
export class AuthModule {}
