import { Inject, Injectable } from '@nestjs/common';
import { IMAGE_PROVIDER } from '../ai/ai.tokens.js';
import type { ImageProvider, ImageRequest } from '../ai/ai.types.js';
import { AgentsService } from '../agents/agents.service.js';
import { providerFailure } from '../agents/provider-failure.js';
import { ArticlesService } from '../articles/articles.service.js';
import { DomainError } from '../common/domain-error.js';
import { JobHandler, type JobEffect } from '../jobs/job-handlers.js';
import type { Job } from '../jobs/job.entity.js';
import { MediaService } from './media.service.js';

/** What a `generate_image` job stores in `args`. */
export interface GenerateImageArgs {
  prompt: string;
  aspect_ratio: ImageRequest['aspectRatio'];
  article_id?: string;
  /** The writer config version (its `image_style`) in force when the job was asked for. */
  agent_config_version: number;
}

export const GENERATE_IMAGE = 'generate_image';

/** Runs `generate_image` jobs: the image (and the article's new featured image) is committed with the job's success. */
@Injectable()
@JobHandler(GENERATE_IMAGE)
export class GenerateImageJob implements JobHandler {
  constructor(
    private readonly agents: AgentsService,
    private readonly articles: ArticlesService,
    private readonly media: MediaService,
    @Inject(IMAGE_PROVIDER) private readonly images: ImageProvider,
  ) {}

  async prepare(job: Job, signal: AbortSignal, progress: (fraction: number) => void): Promise<JobEffect> {
    const scope = { accountId: job.account_id, projectId: job.project_id };
    const args = job.args as unknown as GenerateImageArgs;
    const config = await this.agents.getVersion(scope, 'writer', args.agent_config_version);
    const image = await this.images
      .generate({ prompt: args.prompt, aspectRatio: args.aspect_ratio, style: config.answers.image_style }, signal, progress)
      .catch((err: unknown) => Promise.reject(providerFailure(err, signal)));
    return async (manager) => {
      const media = await this.media.insert(manager, scope, {
        jobId: job.id,
        mimeType: image.mimeType,
        width: image.width,
        height: image.height,
        data: image.data,
      });
      if (args.article_id) {
        const article = await this.articles.setFeaturedImage(manager, scope, args.article_id, media.id, job.credential_id);
        if (!article) {
          throw new DomainError(
            'not_found',
            `The article "${args.article_id}" was deleted while its image was being generated; call generate_image again without article_id, or with another article.`,
          );
        }
      }
      return { status: 'succeeded', job_id: job.id, media, ...(args.article_id ? { article_id: args.article_id } : {}) };
    };
  }
}
