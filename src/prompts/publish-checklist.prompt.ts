import { Injectable } from '@nestjs/common';
import type { ArticleView } from '../articles/article.views.js';
import { McpPrompt, type McpPromptHandler, type PromptContext, type PromptResult } from './mcp-prompt.decorator.js';
import { articleResource, projectArgument, textMessage, unknownArticle } from './prompt-text.js';
import { ReadableArticles } from './readable-articles.js';

/** Below this many words a body is flagged as short. */
const SHORT_BODY_WORDS = 300;
/** Above this many characters a title is flagged as long for search results and social cards. */
const LONG_TITLE = 70;

@McpPrompt({
  name: 'publish_checklist',
  title: 'Pre-publish checklist',
  description:
    'Check one of your articles before publishing (title, excerpt, tags, featured image, links, length; the article is embedded), then publish it with publish_article.',
  arguments: [
    { name: 'article_id', description: 'Id of the article to check and publish (see list_articles).', required: true, maxLength: 100, complete: 'article_id' },
  ],
  needs: ['publish_article'],
})
@Injectable()
export class PublishChecklistPrompt implements McpPromptHandler {
  constructor(private readonly readable: ReadableArticles) {}

  async get(args: Readonly<Record<string, string>>, ctx: PromptContext): Promise<PromptResult> {
    const article = await this.readable.byId(ctx.principal, args.article_id);
    if (!article) throw unknownArticle('article_id', args.article_id);
    const canPublish = ctx.allowedProjects('publish_article').some((p) => p.id === article.project_id);
    const canUpdate = ctx.allowedProjects('update_article').some((p) => p.id === article.project_id);
    const lines = ['Before publishing the article above, go through this checklist with the user:', ...checklist(article), ''];
    if (canUpdate)
      lines.push(
        `Fix what needs fixing with update_article (${projectArgument(ctx.principal, article.project_id)}id "${article.id}", version ${article.version}; the version grows by one with each update).`,
      );
    if (article.status === 'published')
      lines.push('The article is already published: publishing again changes nothing; report the checklist to the user instead.');
    else if (canPublish) {
      lines.push(
        `When the user agrees, publish it with publish_article (${projectArgument(ctx.principal, article.project_id)}id "${article.id}"); give published_at to schedule it for a later time.`,
      );
    } else lines.push("This credential cannot run publish_article in this article's project: report the checklist to the user instead.");
    return { description: `Pre-publish checklist for "${article.title}".`, messages: [articleResource(article), textMessage(lines.join('\n'))] };
  }
}

/** The checklist, with what can be counted already counted. */
function checklist(a: ArticleView): string[] {
  const words = wordCount(a.body);
  const links = linksOf(a.body);
  return [
    `- Title: "${a.title}" (${[...a.title].length} characters${[...a.title].length > LONG_TITLE ? `; over ${LONG_TITLE}, search results will cut it` : ''}). Is it specific and does it match the body?`,
    `- Excerpt: ${a.excerpt.trim() ? `"${a.excerpt}". Does it make a reader want to open the article?` : 'missing. Write one or two sentences that sum the article up.'}`,
    `- Tags: ${a.tags.length ? a.tags.join(', ') : 'none'}. ${a.tags.length ? 'Are they the right ones, spelt as in other articles?' : 'Add two to five.'}`,
    `- Featured image: ${a.featured_image_id ? 'set' : 'none'}.${a.featured_image_id ? '' : ' Propose one (generate_image can make one for this article, if it is available to you).'}`,
    `- Links: ${links.length ? `${links.length} (${links.slice(0, 10).join(', ')}${links.length > 10 ? ', …' : ''}). Check each one points where the text says.` : 'none.'}`,
    `- Body length: ${words} words${words < SHORT_BODY_WORDS ? `; under ${SHORT_BODY_WORDS}, consider expanding it` : ''}. Check spelling, headings and that it ends well.`,
    `- Status: ${a.status}${a.published_at ? ` (published_at ${new Date(a.published_at).toISOString()})` : ''}.`,
  ];
}

function wordCount(body: string): number {
  return body.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/** Distinct link targets: markdown links and bare URLs. */
function linksOf(body: string): string[] {
  const found = new Set<string>();
  for (const m of body.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?[^)]*\)/g)) found.add(m[1]);
  // A bare URL ends before the sentence's punctuation.
  for (const m of body.matchAll(/(?<![(<])\bhttps?:\/\/[^\s)<>\]]+/g)) found.add(m[0].replace(/[.,;:!?'"]+$/, ''));
  return [...found];
}
