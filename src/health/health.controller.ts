import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator, type HealthIndicatorResult } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { LifecycleService } from './lifecycle.service.js';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly lifecycle: LifecycleService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** Liveness: the process answers. */
  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  /** Readiness: database reachable, every migration applied, not draining. */
  @Get('readyz')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: 2_000 }),
      async (): Promise<HealthIndicatorResult> => {
        if (await this.db.showMigrations()) throw new ServiceUnavailableException('Migrations are pending.');
        return { migrations: { status: 'up' } };
      },
      (): HealthIndicatorResult => {
        if (this.lifecycle.draining) throw new ServiceUnavailableException('The server is shutting down.');
        return { lifecycle: { status: 'up' } };
      },
    ]);
  }
}
