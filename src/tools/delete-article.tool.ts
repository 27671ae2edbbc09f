import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../mcp/mcp-tool.decorator.js';
import { ARTICLE_ID_PROPERTY } from './article.schemas.js';

const input = { type: 'object', properties: { id: ARTICLE_ID_PROPERTY }, required: ['id'] } as const;

@McpTool({
  name: 'delete_article',
  title: 'Delete an article',
  description: 'Delete an article: it leaves the project (its handle becomes free) and goes to the trash, where an admin can restore it for 30 days.',
  input,
  output: {
    type: 'object',
    properties: { deleted: { type: 'boolean', const: true }, id: { type: 'string' } },
    required: ['deleted', 'id'],
  },
  scope: 'delete',
  role: 'owner',
  projectScoped: true,
})
@Injectable()
export class DeleteArticleTool {
  constructor(private readonly articles: ArticlesService) {}

  run({ id }: ToolArgs<typeof input>, { principal, project }: ToolContext) {
    return this.articles.delete({ accountId: principal.accountId, projectId: project.id }, id, { credentialId: principal.credential.id });
  }
}
