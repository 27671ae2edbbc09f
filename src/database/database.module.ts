import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source.js';
import { DatabaseNotifications } from './notifications.service.js';

@Module({})
export class DatabaseModule {
  static forRoot(url: string): DynamicModule {
    // Migrations ran before Nest booted (see bootstrap); no retry loop: a dead database is reported once.
    return {
      module: DatabaseModule,
      // Global like TypeORM's DataSource: every feature module may listen for notifications.
      global: true,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(url), retryAttempts: 0 })],
      providers: [DatabaseNotifications],
      exports: [DatabaseNotifications],
    };
  }
}
