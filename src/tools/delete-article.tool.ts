import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type McpToolHandler, type ToolContext } from '../mcp/mcp-tool.decorator.js';
import { ARTICLE_ID_PROPERTY } from './article.schemas.js';

@McpTool({
  name: 'delete_article',
  title: 'Delete an article',
  description: 'Delete an article: it leaves the project (its handle becomes free) and goes to the trash, where an admin can restore it for 30 days.',
  input: { type: 'object', properties: { id: ARTICLE_ID_PROPERTY }, required: ['id'] },
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
export class DeleteArticleTool implements McpToolHandler<{ id: string }> {
  constructor(private readonly articles: ArticlesService) {}

  run({ id }: { id: string }, { principal, project }: ToolContext) {
    return this.articles.delete({ accountId: principal.accountId, projectId: project.id }, id, { credentialId: principal.credential.id });
  }
}
