import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { AiModule } from '../ai/ai.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { GenerateImageJob } from './generate-image.job.js';
import { MediaController } from './media.controller.js';
import { MediaRepository } from './media.repository.js';
import { MediaService } from './media.service.js';

/** Generated images: stored in Postgres, served at `GET /media/:id`, made by `generate_image` jobs. */
@Module({
  imports: [AgentsModule, AiModule, ArticlesModule, AuthModule, JobsModule],
  controllers: [MediaController],
  providers: [MediaService, MediaRepository, GenerateImageJob],
  exports: [MediaService],
})
export class MediaModule {}
