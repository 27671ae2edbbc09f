import { Module } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { ActivityRepository } from './activity.repository.js';
import { ActivityService } from './activity.service.js';

@Module({
  providers: [ActivityService, ActivityRepository, Clock],
  exports: [ActivityService, Clock],
})
export class ActivityModule {}
