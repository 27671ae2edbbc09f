import { Injectable } from '@nestjs/common';
import { ARTICLE_STATUSES } from '../articles/article.entity.js';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { ARTICLE_SUMMARY_SCHEMA } from './article.schemas.js';
import { PAGE_ARGS, pagedOutput } from './paged.schemas.js';
import { ARTICLES_VIEW } from '../protocol/views.js';

const input = {
  type: 'object',
  properties: {
    ...PAGE_ARGS,
    status: { type: 'string', enum: [...ARTICLE_STATUSES] },
    search: { type: 'string', minLength: 1, maxLength: 200, description: 'Substring of the title or handle, case-insensitive.' },
    tag: { type: 'string', minLength: 1, maxLength: 50 },
  },
} as const;

@McpTool({
  name: 'list_articles',
  title: 'List articles',
  description:
    'List articles in a project. Supports pagination, search by title/handle, filtering by status and tag. Newest update first; search is a case-insensitive substring of the title or the handle.',
  input,
  output: pagedOutput(ARTICLE_SUMMARY_SCHEMA),
  scope: 'read',
  role: 'viewer',
  projectScoped: true,
  view: ARTICLES_VIEW,
})
@Injectable()
export class ListArticlesTool {
  constructor(private readonly articles: ArticlesService) {}

  async run(args: ToolArgs<typeof input>, ctx: ToolContext) {
    return ctx.view(await this.articles.list({ accountId: ctx.principal.accountId, projectId: ctx.project.id }, args));
  }
}
