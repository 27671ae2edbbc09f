import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { ARTICLE_FIELD_PROPERTIES, ARTICLE_SCHEMA } from './article.schemas.js';
import { ARTICLE_VIEW } from '../protocol/views.js';

const input = {
  type: 'object',
  properties: {
    ...ARTICLE_FIELD_PROPERTIES,
    tags: { ...ARTICLE_FIELD_PROPERTIES.tags, description: 'Up to 20 tags of 1 to 50 characters.' },
    status: { type: 'string', enum: ['draft', 'published'], default: 'draft', description: 'draft (default) or published.' },
    published_at: {
      type: 'string',
      format: 'date-time',
      description: 'With status "published": when it is (or was) published, ISO-8601 with a time zone; a future time schedules it. Defaults to now.',
    },
  },
  required: ['title'],
} as const;

@McpTool({
  name: 'create_article',
  title: 'Create an article',
  description:
    'Create an article in a project: a draft by default, or published with status "published" (a future published_at schedules it). The handle (URL slug) is derived from the title when not given; a given handle that is already used is an error naming a free one.',
  input,
  output: ARTICLE_SCHEMA,
  scope: 'write',
  role: 'editor',
  projectScoped: true,
  view: ARTICLE_VIEW,
})
@Injectable()
export class CreateArticleTool {
  constructor(private readonly articles: ArticlesService) {}

  async run(args: ToolArgs<typeof input>, ctx: ToolContext) {
    const { principal, project } = ctx;
    const { published_at, ...fields } = args;
    const article = await this.articles.create(
      { accountId: principal.accountId, projectId: project.id },
      { ...fields, published_at: published_at === undefined ? undefined : new Date(published_at) },
    );
    return ctx.view(article);
  }
}
