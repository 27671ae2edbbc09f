import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { AiModule } from '../ai/ai.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { RateLimitStoreModule } from '../rate-limit/rate-limit.module.js';
import { GenerateImageJob } from './generate-image.job.js';
import { MediaController } from './media.controller.js';
import { MediaReadLimiter } from './media-read-limiter.js';
import { MediaRepository } from './media.repository.js';
import { MediaService } from './media.service.js';

/** Generated images: stored in Postgres, served at `GET /media/:id` (rate-limited per credential), made by `generate_image` jobs. */
@Module({
  imports: [AgentsModule, AiModule, ArticlesModule, AuthModule, JobsModule, RateLimitStoreModule],
  controllers: [MediaController],
  providers: [MediaService, MediaRepository, MediaReadLimiter, GenerateImageJob],
  exports: [MediaService],
})
export class MediaModule {}
