import { Module } from '@nestjs/common';
import { ArticlesModule } from '../articles/articles.module.js';
import { GetArticleTool } from './get-article.tool.js';
import { ListArticlesTool } from './list-articles.tool.js';
import { ListProjectsTool } from './list-projects.tool.js';

/** Every MCP tool of the product: thin adapters over the domain services, found by the catalogue at boot. */
@Module({
  imports: [ArticlesModule],
  providers: [ListProjectsTool, ListArticlesTool, GetArticleTool],
})
export class ToolsModule {}
