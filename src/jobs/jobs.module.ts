import { Module } from '@nestjs/common';
import { JobEventsService } from './job-events.service.js';
import { JobHandlers } from './job-handlers.js';
import { JobWorkerService } from './job-worker.service.js';
import { JobsService } from './jobs.service.js';

/** Durable jobs in Postgres: the queue, its events (LISTEN/NOTIFY) and, with ROLE=worker or all, the worker. */
@Module({
  providers: [JobsService, JobEventsService, JobHandlers, JobWorkerService],
  exports: [JobsService, JobHandlers],
})
export class JobsModule {}
