import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source.js';

@Module({})
export class DatabaseModule {
  static forRoot(url: string): DynamicModule {
    // Migrations ran before Nest booted (see bootstrap); no retry loop: a dead database is reported once.
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(url), retryAttempts: 0 })],
    };
  }
}
