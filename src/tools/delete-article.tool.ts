import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { DomainError } from '../common/domain-error.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { ARTICLE_ID_PROPERTY } from './article.schemas.js';

const input = { type: 'object', properties: { id: ARTICLE_ID_PROPERTY }, required: ['id'] } as const;

@McpTool({
  name: 'delete_article',
  title: 'Delete an article',
  description:
    'Delete an article: it leaves the project (its handle becomes free) and goes to the trash, where an admin can restore it for 30 days. ' +
    'A client that supports elicitation is asked to confirm first; without a yes it answers the error "not_confirmed" and deletes nothing.',
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

  async run({ id }: ToolArgs<typeof input>, ctx: ToolContext) {
    const scope = { accountId: ctx.principal.accountId, projectId: ctx.project.id };
    if (ctx.canAsk('elicitation/create')) {
      // An unknown article is refused before the user is asked about it.
      const article = await this.articles.get(scope, { id });
      // 2025: asked over the call's stream; 2026-07-28: input_required, and this runs again with the answer.
      const { confirm: answer } = await ctx.ask({
        confirm: {
          method: 'elicitation/create',
          params: {
            message: `Delete the article "${article.title}" (${article.handle}) from project "${ctx.project.name}"? It goes to the trash, where an admin can restore it for 30 days.`,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean', title: 'Delete this article', description: 'Yes to move it to the trash.', default: false } },
              required: ['confirm'],
            },
          },
        },
      });
      // null: the client could not be asked after all (its stream closed); nothing is deleted unasked.
      if (answer?.action !== 'accept' || answer.content?.confirm !== true) {
        const what =
          answer === null ? 'could not be asked' : answer.action === 'accept' ? 'did not confirm' : answer.action === 'decline' ? 'declined' : 'cancelled';
        throw new DomainError(
          'not_confirmed',
          `The user ${what} the deletion of article ${id}; nothing was deleted. Ask them before calling delete_article again.`,
        );
      }
    }
    return this.articles.delete(scope, id, { credentialId: ctx.principal.credential.id });
  }
}
