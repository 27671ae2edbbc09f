import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { DomainError } from '../common/domain-error.js';
import { McpTool, type ToolArgs, type ToolContext } from '../mcp/mcp-tool.decorator.js';
import { ARTICLE_SCHEMA } from './article.schemas.js';

const input = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 100, description: 'The article id.' },
    handle: { type: 'string', minLength: 1, maxLength: 200, description: 'The article handle (URL slug).' },
  },
} as const;

@McpTool({
  name: 'get_article',
  title: 'Get an article',
  description: 'Read one article in full (markdown body included), by id or by handle: give exactly one of them.',
  input,
  output: ARTICLE_SCHEMA,
  scope: 'read',
  role: 'viewer',
  projectScoped: true,
})
@Injectable()
export class GetArticleTool {
  constructor(private readonly articles: ArticlesService) {}

  run(args: ToolArgs<typeof input>, { principal, project }: ToolContext) {
    if ((args.id === undefined) === (args.handle === undefined)) {
      throw new DomainError('invalid_arguments', 'Give exactly one of "id" or "handle".');
    }
    return this.articles.get({ accountId: principal.accountId, projectId: project.id }, args);
  }
}
