import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';
import { RuntimeMetrics } from './runtime.metrics.js';

/** `GET /metrics` and the registry every module reports to (global: any module may inject MetricsService). */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, RuntimeMetrics],
  exports: [MetricsService],
})
export class MetricsModule {}
