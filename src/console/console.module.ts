import { AuditModule } from '../audit/audit.module.js';
import { ConsoleAuditController } from './console-audit.controller.js';
import { ConsoleAuditService } from './console-audit.service.js';
import { Module } from '@nestjs/common';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { ConsoleIdentityProviderController } from './console-identity-provider.controller.js';
import { ConsoleIdentityProviderService } from './console-identity-provider.service.js';
import { ActivityModule } from '../activity/activity.module.js';
import { AgentsModule } from '../agents/agents.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { MediaModule } from '../media/media.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { LoginLinksModule } from '../login-links/login-links.module.js';
import { PeopleModule } from '../people/people.module.js';
import { UsersModule } from '../users/users.module.js';
import { WebModule } from '../web/web.module.js';
import { ConsoleActivityController } from './console-activity.controller.js';
import { ConsoleActivityService } from './console-activity.service.js';
import { ConsoleController } from './console.controller.js';
import { ConsoleSessionGuard } from './console-session.guard.js';
import { ConsoleService } from './console.service.js';
import { ConsoleJobsController } from './console-jobs.controller.js';
import { ConsoleJobsService } from './console-jobs.service.js';
import { ConsoleMembersController } from './console-members.controller.js';
import { ConsoleMembersService } from './console-members.service.js';
import { ConsoleSettingsController } from './console-settings.controller.js';
import { ConsoleSettingsService } from './console-settings.service.js';

/** The owners' console at /console/ (docs/console.md): pages over the same services as the admin API. */
@Module({
  imports: [
    AuditModule,
    AuthModule,
    UsersModule,
    ActivityModule,
    ArticlesModule,
    JobsModule,
    WebModule,
    ProjectsModule,
    AgentsModule,
    PeopleModule,
    LoginLinksModule,
    MediaModule,
    IdentityProvidersModule,
  ],
  controllers: [
    ConsoleSettingsController,
    ConsoleActivityController,
    ConsoleMembersController,
    ConsoleJobsController,
    ConsoleAuditController,
    ConsoleIdentityProviderController,
    ConsoleController,
  ],
  providers: [
    ConsoleService,
    ConsoleSessionGuard,
    ConsoleSettingsService,
    ConsoleActivityService,
    ConsoleMembersService,
    ConsoleJobsService,
    ConsoleAuditService,
    ConsoleIdentityProviderService,
  ],
})
export class ConsoleModule {}
