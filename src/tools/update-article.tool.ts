import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { ARTICLE_FIELD_PROPERTIES, ARTICLE_ID_PROPERTY, ARTICLE_SCHEMA } from './article.schemas.js';
import { ARTICLE_VIEW } from '../protocol/views.js';

const input = {
  type: 'object',
  properties: {
    id: ARTICLE_ID_PROPERTY,
    version: { type: 'integer', minimum: 1, description: 'The version you read (get_article or list_articles).' },
    ...ARTICLE_FIELD_PROPERTIES,
  },
  required: ['id', 'version'],
} as const;

@McpTool({
  name: 'update_article',
  title: 'Update an article',
  description:
    "Change an article's title, body, handle, excerpt or tags (fields left out stay as they are). Pass the version you read: if the article changed since, the call fails with its current version, so read it again and retry. The previous state is kept as a revision (only the newest ones are kept: get_article says how many).",
  input,
  output: ARTICLE_SCHEMA,
  scope: 'write',
  role: 'editor',
  projectScoped: true,
  view: ARTICLE_VIEW,
})
@Injectable()
export class UpdateArticleTool {
  constructor(private readonly articles: ArticlesService) {}

  async run({ id, version, ...fields }: ToolArgs<typeof input>, ctx: ToolContext) {
    const { principal, project } = ctx;
    const article = await this.articles.update({ accountId: principal.accountId, projectId: project.id }, id, version, fields, {
      credentialId: principal.credential.id,
    });
    return ctx.view(article);
  }
}
