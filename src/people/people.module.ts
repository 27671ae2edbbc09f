import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { MembershipsService } from './memberships.service.js';
import { PeopleService } from './people.service.js';
import { UsersModule } from '../users/users.module.js';

/**
 * People as the operator manages them (admin API): users and their account and project memberships.
 * Apart from {@link UsersModule}, which accounts and sign-in use, because changing people drops the
 * cached principals (auth), and auth already depends on accounts.
 */
@Module({
  imports: [UsersModule, AccountsModule, ProjectsModule, AuthModule, AuditModule],
  providers: [PeopleService, MembershipsService],
  exports: [PeopleService, MembershipsService],
})
export class PeopleModule {}
