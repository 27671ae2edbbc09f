import { Module } from '@nestjs/common';
import { CONFORMANCE_FIXTURES } from './conformance-fixtures.tools.js';

/**
 * The official conformance suite's fixture tools (`test_*`), found by the catalogue like any
 * tool. AppModule imports this module only when CONFORMANCE_FIXTURES=true (`npm run conformance`).
 */
@Module({ providers: CONFORMANCE_FIXTURES })
export class ConformanceFixturesModule {}
