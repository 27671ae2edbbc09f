import { Injectable } from '@nestjs/common';
import { McpPrompt, type McpPromptHandler, type PromptContext, type PromptResult } from './mcp-prompt.decorator.js';
import { articleResource, projectArgument, textMessage, unknownArticle } from './prompt-text.js';
import { ReadableArticles } from './readable-articles.js';

@McpPrompt({
  name: 'edit_for_tone',
  title: 'Edit an article for tone',
  description: 'Rewrite one of your articles in another tone (the article is embedded), keeping its facts, then save it with update_article.',
  arguments: [
    { name: 'article_id', description: 'Id of the article to rewrite (see list_articles).', required: true, maxLength: 100, complete: 'article_id' },
    { name: 'tone', description: 'The tone to rewrite it in, e.g. friendly, formal, concise.', required: true, maxLength: 200, complete: 'tone' },
  ],
  needs: ['update_article'],
})
@Injectable()
export class EditForTonePrompt implements McpPromptHandler {
  constructor(private readonly readable: ReadableArticles) {}

  async get(args: Readonly<Record<string, string>>, ctx: PromptContext): Promise<PromptResult> {
    const article = await this.readable.byId(ctx.principal, args.article_id);
    if (!article) throw unknownArticle('article_id', args.article_id);
    const canUpdate = ctx.allowedProjects('update_article').some((p) => p.id === article.project_id);
    const lines = [
      `Rewrite the article above in a ${args.tone} tone.`,
      'Keep its facts, structure, headings, links and markdown formatting; change the wording only. Keep the title and excerpt unless the new tone needs them changed.',
    ];
    if (canUpdate) {
      lines.push(
        `Show the user the rewrite, then save it with update_article: ${projectArgument(ctx.principal, article.project_id)}id "${article.id}", version ${article.version}, and the new body (and title or excerpt if they changed).`,
        'If update_article says the version is stale, read the article again with get_article and redo the rewrite on its current text.',
      );
    } else {
      lines.push("This credential cannot run update_article in this article's project: show the user the rewrite, and do not try to save it.");
    }
    return { description: `Rewrite "${article.title}" in a ${args.tone} tone.`, messages: [articleResource(article), textMessage(lines.join('\n'))] };
  }
}
