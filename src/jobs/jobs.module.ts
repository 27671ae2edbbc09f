import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobEventsService } from './job-events.service.js';
import { JobHandlers } from './job-handlers.js';
import { JobWorkerService } from './job-worker.service.js';
import { JobsRepository } from './jobs.repository.js';
import { JobsService } from './jobs.service.js';

/**
 * Durable jobs in Postgres: the queue, its events (LISTEN/NOTIFY) and, with ROLE=worker or all, the
 * worker, which runs the providers marked `@JobHandler(kind)` in any module.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [JobsService, JobsRepository, JobEventsService, JobHandlers, JobWorkerService],
  exports: [JobsService],
})
export class JobsModule {}
