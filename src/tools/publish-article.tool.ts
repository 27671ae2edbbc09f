import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { ARTICLE_ID_PROPERTY, ARTICLE_SCHEMA } from './article.schemas.js';

const input = {
  type: 'object',
  properties: {
    id: ARTICLE_ID_PROPERTY,
    published_at: { type: 'string', format: 'date-time', description: 'ISO-8601 with a time zone, e.g. 2026-01-31T09:00:00Z. Defaults to now.' },
  },
  required: ['id'],
} as const;

@McpTool({
  name: 'publish_article',
  title: 'Publish an article',
  description:
    'Publish an article now, or schedule it: with a future published_at its status becomes "scheduled" and it is published at that time. A past published_at publishes it with that date.',
  input,
  output: ARTICLE_SCHEMA,
  scope: 'write',
  role: 'editor',
  projectScoped: true,
})
@Injectable()
export class PublishArticleTool {
  constructor(private readonly articles: ArticlesService) {}

  /** Called from the article view too: its answer carries what the view shows next (the view's own tools and image). */
  async run({ id, published_at }: ToolArgs<typeof input>, ctx: ToolContext) {
    const { principal, project } = ctx;
    const at = published_at === undefined ? undefined : new Date(published_at);
    const article = await this.articles.publish({ accountId: principal.accountId, projectId: project.id }, id, at, { credentialId: principal.credential.id });
    return ctx.view(article);
  }
}
