import { Inject, Injectable } from '@nestjs/common';
import { WRITER_PROVIDER } from '../ai/ai.tokens.js';
import type { WriterProvider } from '../ai/ai.types.js';
import { ArticlesService } from '../articles/articles.service.js';
import { JobHandler, type JobEffect } from '../jobs/job-handlers.js';
import type { Job } from '../jobs/job.entity.js';
import { AgentsService } from './agents.service.js';
import { providerFailure } from './provider-failure.js';

/** What a `write_article` job stores in `args`. */
export interface WriteArticleArgs {
  brief: string;
  title?: string;
  length?: 'short' | 'medium' | 'long';
  /** The writer config version in force when the job was asked for. */
  agent_config_version: number;
}

export const WRITE_ARTICLE = 'write_article';

const MAX_TAGS = 10;
const MAX_TAG_LENGTH = 50;

/** Runs `write_article` jobs: the writer drafts, and the draft article is committed with the job's success. */
@Injectable()
@JobHandler(WRITE_ARTICLE)
export class WriteArticleJob implements JobHandler {
  constructor(
    private readonly agents: AgentsService,
    private readonly articles: ArticlesService,
    @Inject(WRITER_PROVIDER) private readonly writer: WriterProvider,
  ) {}

  async prepare(job: Job, signal: AbortSignal, progress: (fraction: number) => void): Promise<JobEffect> {
    const scope = { accountId: job.account_id, projectId: job.project_id };
    const args = job.args as unknown as WriteArticleArgs;
    const config = await this.agents.getVersion(scope, 'writer', args.agent_config_version);
    const draft = await this.writer
      .write({ brief: args.brief, title: args.title, length: args.length, config: config.answers }, signal, progress)
      .catch((err: unknown) => Promise.reject(providerFailure(err, signal)));
    // Provider output is clamped to the article rules (src/articles/article-rules.ts) rather than failing the job.
    const title = clamp(args.title?.trim() || draft.title || 'Untitled draft', 300);
    const excerpt = clamp(draft.excerpt, 2_000);
    const tags = draft.tags
      .map((t) => clamp(t, MAX_TAG_LENGTH).trim())
      .filter(Boolean)
      .slice(0, MAX_TAGS);
    return async (manager) => {
      const article = await this.articles.createInTransaction(manager, scope, {
        title,
        excerpt,
        body: draft.body,
        tags,
        status: 'draft',
        source: 'ai',
        job_id: job.id,
        agent_config_version: config.version,
      });
      return { status: 'succeeded', job_id: job.id, article };
    };
  }
}

/** At most `max` code points (as JSON Schema and the article rules count them). */
function clamp(text: string, max: number): string {
  const points = Array.from(text);
  return points.length > max ? points.slice(0, max).join('') : text;
}
