import { Module } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { ActivityReportsRepository } from './activity-reports.repository.js';
import { ActivityReportsService } from './activity-reports.service.js';
import { ActivityWriterRepository } from './activity-writer.repository.js';
import { ActivityWriterService } from './activity-writer.service.js';

/** The activity log: ActivityWriterService records each request, ActivityReportsService reads the log back. */
@Module({
  providers: [ActivityWriterService, ActivityWriterRepository, ActivityReportsService, ActivityReportsRepository, Clock],
  exports: [ActivityWriterService, ActivityReportsService, Clock],
})
export class ActivityModule {}
