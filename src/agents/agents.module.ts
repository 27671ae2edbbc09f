import { AuditModule } from '../audit/audit.module.js';
import { Module } from '@nestjs/common';
import { AiModule } from '../ai/ai.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { AgentConfigsRepository } from './agent-configs.repository.js';
import { AgentsService } from './agents.service.js';
import { WriteArticleJob } from './write-article.job.js';

/** The writer agent: its versioned config, the setup handshake, and the `write_article` jobs. */
@Module({
  imports: [ArticlesModule, JobsModule, AiModule, AuditModule],
  providers: [AgentsService, AgentConfigsRepository, WriteArticleJob],
  exports: [AgentsService],
})
export class AgentsModule {}
