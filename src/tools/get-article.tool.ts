import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { DomainError } from '../common/domain-error.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { ARTICLE_WITH_REVISIONS_SCHEMA } from './article.schemas.js';
import { ARTICLE_VIEW } from '../protocol/views.js';

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
  description:
    'Read one article in full (markdown body included), by id or by handle: give exactly one of them. `revisions` says how many earlier states are kept (each change keeps the previous one; only the newest `limit` are kept).',
  input,
  output: ARTICLE_WITH_REVISIONS_SCHEMA,
  scope: 'read',
  role: 'viewer',
  projectScoped: true,
  view: ARTICLE_VIEW,
})
@Injectable()
export class GetArticleTool {
  constructor(private readonly articles: ArticlesService) {}

  async run(args: ToolArgs<typeof input>, ctx: ToolContext) {
    const { principal, project } = ctx;
    if ((args.id === undefined) === (args.handle === undefined)) {
      throw new DomainError('invalid_arguments', 'Give exactly one of "id" or "handle".');
    }
    const scope = { accountId: principal.accountId, projectId: project.id };
    const article = await this.articles.get(scope, args);
    return ctx.view({ ...article, revisions: await this.articles.revisions(scope, article.id) });
  }
}
