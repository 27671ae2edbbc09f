import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { DemoSeed } from './demo-seed.js';

@Module({
  imports: [AccountsModule, ProjectsModule, ArticlesModule, AuthModule],
  providers: [DemoSeed],
  exports: [DemoSeed],
})
export class DemoModule {}
