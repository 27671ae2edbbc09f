import { Module } from '@nestjs/common';
import { ArticleListingService } from './article-listing.service.js';
import { ArticleSchedulerService } from './article-scheduler.service.js';
import { ArticleTrashService } from './article-trash.service.js';
import { ArticlesService } from './articles.service.js';

@Module({
  providers: [ArticlesService, ArticleListingService, ArticleTrashService, ArticleSchedulerService],
  exports: [ArticlesService, ArticleTrashService, ArticleSchedulerService],
})
export class ArticlesModule {}
