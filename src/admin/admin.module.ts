import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ActivityModule } from '../activity/activity.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { OAuthModule } from '../oauth/oauth.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { PeopleModule } from '../people/people.module.js';
import { AccountsController, ActivityController, CredentialsController, ProjectsController } from './admin.controllers.js';
import { AdminGuard } from './admin.guard.js';
import { LoginLinksModule } from '../login-links/login-links.module.js';
import { LoginLinksController } from './login-links.controller.js';
import { OAuthClientsController } from './oauth-clients.controller.js';
import { MembersController, UsersController } from './people.controllers.js';
import { TrashController } from './trash.controller.js';
import { AuditModule } from '../audit/audit.module.js';
import { AuditController } from './audit.controller.js';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { IdentityProvidersController } from './identity-providers.controller.js';

@Module({
  imports: [
    AccountsModule,
    ProjectsModule,
    AuthModule,
    ActivityModule,
    JobsModule,
    ArticlesModule,
    PeopleModule,
    LoginLinksModule,
    OAuthModule,
    AuditModule,
    IdentityProvidersModule,
  ],
  controllers: [
    AccountsController,
    ProjectsController,
    CredentialsController,
    ActivityController,
    TrashController,
    UsersController,
    MembersController,
    LoginLinksController,
    OAuthClientsController,
    AuditController,
    IdentityProvidersController,
  ],
  providers: [AdminGuard],
})
export class AdminModule {}
