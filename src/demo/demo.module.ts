import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { LoginLinksModule } from '../sign-in/login-links.module.js';
import { DemoOwnerRepository } from './demo-owner.repository.js';
import { DemoSeed } from './demo-seed.js';

@Module({
  imports: [AccountsModule, ProjectsModule, ArticlesModule, AuthModule, LoginLinksModule],
  providers: [DemoSeed, DemoOwnerRepository],
  exports: [DemoSeed],
})
export class DemoModule {}
