/**
 * Each Jest worker runs its test files, one after another, on a database of its own
 * (`<run's database>_w<worker>`, made and migrated by the global setup). Files of two workers run
 * at the same time; on one database, one file's background work (job workers, purges) and its
 * account-less rows (audit events of people, sign-in links) would reach the other's.
 */
export function workerDatabaseUrl(base: string, worker: number): string {
  const url = new URL(base);
  url.pathname = `${url.pathname}_w${worker}`;
  return url.toString();
}

// As a setup file (jest.config.cjs), in each test file's environment before the file loads:
// DATABASE_URL becomes this worker's database. A run in band is worker 1.
if (process.env.REBLOG_TEST_BASE_DATABASE_URL) {
  process.env.DATABASE_URL = workerDatabaseUrl(process.env.REBLOG_TEST_BASE_DATABASE_URL, Number(process.env.JEST_WORKER_ID ?? 1));
}
