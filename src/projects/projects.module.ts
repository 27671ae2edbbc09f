import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [AccountsModule, AuditModule],
  providers: [ProjectsService, ProjectsRepository],
  exports: [ProjectsService],
})
export class ProjectsModule {}
