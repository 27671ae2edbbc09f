import 'reflect-metadata';
import { startTelemetry } from './common/telemetry.js';
import { start } from './start.js';

// Tracing first (only when an OTEL_* exporter is configured: README.md#tracing), then the app.
startTelemetry().then(
  () => start(),
  (err: Error) => {
    process.stderr.write(`Configuration error: ${err.message}\n`);
    process.exit(1);
  },
);
