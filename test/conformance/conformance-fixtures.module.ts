import { Module } from '@nestjs/common';
import { CLIENT_REQUEST_FIXTURES } from './client-request-fixtures.js';
import { CONFORMANCE_FIXTURES } from './conformance-fixtures.tools.js';
import { JSON_SCHEMA_FIXTURES } from './json-schema-fixtures.js';
import { MRTR_FIXTURES } from './mrtr-fixtures.js';
import { PROMPT_FIXTURES } from './prompt-fixtures.js';
import { PROTOCOL_2026_FIXTURES } from './protocol-2026-fixtures.js';
import { RESOURCE_FIXTURES } from './resource-fixtures.js';
import { TASKS_FIXTURES } from './tasks-fixtures.js';

/**
 * The official conformance suite's fixture tools (`test_*`), found by the catalogue like any tool.
 * Added to the app by the conformance entry point (main.ts here, run by `npm run conformance`).
 */
@Module({
  providers: [
    ...CONFORMANCE_FIXTURES,
    ...PROMPT_FIXTURES,
    ...JSON_SCHEMA_FIXTURES,
    ...CLIENT_REQUEST_FIXTURES,
    ...RESOURCE_FIXTURES,
    ...PROTOCOL_2026_FIXTURES,
    ...MRTR_FIXTURES,
    ...TASKS_FIXTURES,
  ],
})
export class ConformanceFixturesModule {}
