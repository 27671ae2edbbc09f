import { Module } from '@nestjs/common';
import { CONFORMANCE_FIXTURES } from './conformance-fixtures.tools.js';
import { RESOURCE_FIXTURES } from './resource-fixtures.js';

/**
 * The official conformance suite's fixture tools (`test_*`), found by the catalogue like any tool.
 * Added to the app by the conformance entry point (main.ts here, run by `npm run conformance`).
 */
@Module({ providers: [...CONFORMANCE_FIXTURES, ...RESOURCE_FIXTURES] })
export class ConformanceFixturesModule {}
