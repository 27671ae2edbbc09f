import 'reflect-metadata';
import { start } from '../../src/start.js';
import { ConformanceFixturesModule } from './conformance-fixtures.module.js';

// The server as `npm start` runs it, plus the fixture tools the official conformance suite calls
// (built by tsconfig.conformance.json and started by `npm run conformance`).
// The fixtures only with CONFORMANCE_FIXTURES=true (set by the script), so this build started by hand is the product.
void start({ extraModules: process.env.CONFORMANCE_FIXTURES === 'true' ? [ConformanceFixturesModule] : [] });
