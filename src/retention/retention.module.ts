import { Module } from '@nestjs/common';
import { RetentionRepository } from './retention.repository.js';
import { RetentionService } from './retention.service.js';

/** The background purge of activity, audit events, finished jobs and orphaned generated images past their retention. */
@Module({
  providers: [RetentionService, RetentionRepository],
  exports: [RetentionService],
})
export class RetentionModule {}
