import { DataSource } from 'typeorm';
import { callOk } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** The app's own DataSource, for checks in SQL (counts, revisions) and for ageing rows. */
export function sql(t: TestApp): DataSource {
  return t.app.get(DataSource);
}

/** The live count of a project's articles, by status, counted the slow way. */
export async function countedByStatus(t: TestApp, projectId: string): Promise<Record<string, number>> {
  const rows = (await sql(t).query(`SELECT status, count(*)::int AS n FROM articles WHERE project_id = $1 AND deleted_at IS NULL GROUP BY status`, [
    projectId,
  ])) as {
    status: string;
    n: number;
  }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** `list_articles` totals for the whole project and per status, as the tool answers them. */
export async function listedTotals(t: TestApp, key: string, projectId: string): Promise<{ all: number; byStatus: Record<string, number> }> {
  const all = (await callOk(t, key, 'list_articles', { project_id: projectId, page_size: 1 })).pagination.total as number;
  const byStatus: Record<string, number> = {};
  for (const status of ['draft', 'scheduled', 'published', 'archived']) {
    const total = (await callOk(t, key, 'list_articles', { project_id: projectId, status, page_size: 1 })).pagination.total as number;
    if (total) byStatus[status] = total;
  }
  return { all, byStatus };
}

/** The listing totals must equal count(*), overall and per status. */
export async function expectTotalsMatch(t: TestApp, key: string, projectId: string): Promise<void> {
  const counted = await countedByStatus(t, projectId);
  const listed = await listedTotals(t, key, projectId);
  expect(listed.byStatus).toEqual(counted);
  expect(listed.all).toBe(Object.values(counted).reduce((a, b) => a + b, 0));
}
