import { rmSync } from 'node:fs';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres.js';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__REBLOG_TEST_DB__ as { db: EmbeddedPostgres; dir: string } | undefined;
  if (!state) return;
  await state.db.stop();
  rmSync(state.dir, { recursive: true, force: true });
}
