import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { ArticleListingRepository } from './article-listing.repository.js';
import { ArticleListingService } from './article-listing.service.js';
import { ArticleSchedulerService } from './article-scheduler.service.js';
import { ArticleTrashService } from './article-trash.service.js';
import { ArticlesRepository } from './articles.repository.js';
import { ArticlesService } from './articles.service.js';

@Module({
  imports: [ProjectsModule],
  providers: [ArticlesService, ArticlesRepository, ArticleListingService, ArticleListingRepository, ArticleTrashService, ArticleSchedulerService],
  exports: [ArticlesService, ArticleTrashService, ArticleSchedulerService],
})
export class ArticlesModule {}
