import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { LoginLinksModule } from '../login-links/login-links.module.js';
import { UsersModule } from '../users/users.module.js';
import { DemoSeed } from './demo-seed.js';

@Module({
  imports: [AccountsModule, ProjectsModule, ArticlesModule, AuthModule, UsersModule, LoginLinksModule],
  providers: [DemoSeed],
  exports: [DemoSeed],
})
export class DemoModule {}
