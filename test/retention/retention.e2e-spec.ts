import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids.js';
import { RetentionService, type RetentionTable } from '../../src/retention/retention.service.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/** Inserts `n` activity entries of the tenant made `days` days ago (a second apart), with UUID v7 ids of that time, as the writer makes them. */
async function seedActivity(db: DataSource, tenant: Tenant, days: number, n: number, method: string): Promise<void> {
  await db.query(
    `INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, method, outcome, duration_ms, count)
     SELECT overlay(overlay(md5(random()::text || g) PLACING lpad(to_hex(floor(extract(epoch FROM ts) * 1000)::bigint), 12, '0') FROM 1 FOR 12) PLACING '7' FROM 13 FOR 1)::uuid,
            ts, $1, 'api_key', $2, 'test key', $5, 'ok', 1, 1
       FROM (SELECT g, now() - make_interval(days => $3) - g * interval '1 second' AS ts FROM generate_series(1, $4) g) s`,
    [tenant.accountId, tenant.keyId, days, n, method],
  );
}

async function methods(db: DataSource, tenant: Tenant): Promise<Record<string, number>> {
  const rows: { method: string; n: number }[] = await db.query(`SELECT method, count(*)::int AS n FROM activity_log WHERE account_id = $1 GROUP BY method`, [
    tenant.accountId,
  ]);
  return Object.fromEntries(rows.map((r) => [r.method, r.n]));
}

async function job(db: DataSource, tenant: Tenant, status: string, finishedDaysAgo: number | null, args: object = {}): Promise<string> {
  const id = newId();
  await db.query(
    `INSERT INTO jobs (id, account_id, project_id, tool, args, status, finished_at)
     VALUES ($1, $2, $3, 'generate_image', $4::jsonb, $5, CASE WHEN $6::int IS NULL THEN NULL ELSE now() - make_interval(days => $6::int) END)`,
    [id, tenant.accountId, tenant.projectIds[0], JSON.stringify(args), status, finishedDaysAgo],
  );
  return id;
}

async function media(db: DataSource, tenant: Tenant, jobId: string | null, daysAgo: number): Promise<string> {
  const id = newId();
  await db.query(
    `INSERT INTO media (id, account_id, project_id, job_id, mime_type, width, height, size, data, created_at)
     VALUES ($1, $2, $3, $4, 'image/png', 1, 1, 1, '\\x00', now() - make_interval(days => $5))`,
    [id, tenant.accountId, tenant.projectIds[0], jobId, daysAgo],
  );
  return id;
}

async function article(db: DataSource, tenant: Tenant, opts: { trashed?: boolean; featured?: string } = {}): Promise<string> {
  const id = newId();
  await db.query(
    `INSERT INTO articles (id, account_id, project_id, handle, title, status, word_count, featured_image_id, deleted_at)
     VALUES ($1, $2, $3, $4, 't', 'draft', 0, $5, CASE WHEN $6 THEN now() - interval '3 days' END)`,
    [id, tenant.accountId, tenant.projectIds[0], `a-${id}`, opts.featured ?? null, opts.trashed ?? false],
  );
  return id;
}

const ids = async (db: DataSource, table: 'jobs' | 'media', tenant: Tenant): Promise<string[]> =>
  ((await db.query(`SELECT id FROM ${table} WHERE account_id = $1 ORDER BY id`, [tenant.accountId])) as { id: string }[]).map((r) => r.id);

describe('retention purge', () => {
  let t: TestApp;
  let t2: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    const env = { ACTIVITY_RETENTION_DAYS: '90', JOB_RETENTION_DAYS: '30', AUDIT_RETENTION_DAYS: '400' };
    t = await startTestApp(env);
    t2 = await startTestApp(env);
    // The tests call purge() themselves; no timer competes for the lock.
    for (const app of [t, t2]) app.app.get(RetentionService).stopTimer();
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
    await t2.close();
  });

  it('deletes activity older than ACTIVITY_RETENTION_DAYS in batches of the given size, keeps the recent and every other account', async () => {
    const tenant = await createTenant(t);
    const other = await createTenant(t);
    await seedActivity(db, tenant, 91, 10, 'old');
    await seedActivity(db, tenant, 89, 4, 'recent');
    await seedActivity(db, other, 89, 2, 'recent');

    const batches: number[] = [];
    const result = await t.app.get(RetentionService).purge({
      batch: 3,
      pauseMs: 0,
      onBatch: (table, n) => void (table === 'activity_log' && batches.push(n)),
    });

    expect(result.skipped).toBe(false);
    expect(await methods(db, tenant)).toEqual({ recent: 4 });
    expect(await methods(db, other)).toEqual({ recent: 2 });
    // Never more than a batch per statement, and it went on until a batch came short.
    expect(batches.every((n) => n <= 3)).toBe(true);
    expect(batches.slice(0, -1).every((n) => n === 3)).toBe(true);
    expect(batches[batches.length - 1]).toBeLessThan(3);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(result.skipped ? -1 : result.removed.activity_log);
    expect(result.skipped ? 0 : result.removed.activity_log).toBeGreaterThanOrEqual(10);

    const metrics = await t.http.get('/metrics');
    expect(metrics.text).toMatch(/reblog_retention_rows_removed_total\{table="activity_log"\} \d+/);
  });

  it('lets one instance at a time purge: the other skips while the lock is held, and purges once it is free', async () => {
    const tenant = await createTenant(t);
    await seedActivity(db, tenant, 100, 5, 'old');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));

    const first = t.app.get(RetentionService).purge({
      batch: 2,
      pauseMs: 0,
      onBatch: async () => {
        entered();
        await held;
      },
    });
    await inside;
    expect(await t2.app.get(RetentionService).purge()).toEqual({ skipped: true });
    // The first instance's other purges too.
    expect(await t.app.get(RetentionService).purge()).toEqual({ skipped: true });
    release();
    expect((await first).skipped).toBe(false);
    expect(await methods(db, tenant)).toEqual({});

    await seedActivity(db, tenant, 100, 1, 'old');
    const second = await t2.app.get(RetentionService).purge();
    expect(second.skipped).toBe(false);
    expect(await methods(db, tenant)).toEqual({});
  });

  it('deletes finished jobs older than JOB_RETENTION_DAYS and the old generated images of articles deleted for good, nothing else', async () => {
    const tenant = await createTenant(t);
    const gone = randomUUID();
    const oldDone = await job(db, tenant, 'succeeded', 31);
    const oldFailed = await job(db, tenant, 'failed', 40);
    const oldCancelled = await job(db, tenant, 'cancelled', 31);
    const recentDone = await job(db, tenant, 'succeeded', 29);
    const running = await job(db, tenant, 'running', null);
    const queued = await job(db, tenant, 'queued', null);

    const live = await article(db, tenant);
    const trashed = await article(db, tenant, { trashed: true });
    // Images made by generate_image for an article: purged only when the article is gone and the image is old.
    const ofGoneJob = await job(db, tenant, 'succeeded', 31, { article_id: gone });
    const ofGone = await media(db, tenant, ofGoneJob, 31);
    const recentOfGoneJob = await job(db, tenant, 'succeeded', 31, { article_id: gone });
    const recentOfGone = await media(db, tenant, recentOfGoneJob, 29);
    const ofTrashedJob = await job(db, tenant, 'succeeded', 31, { article_id: trashed });
    const ofTrashed = await media(db, tenant, ofTrashedJob, 31);
    const ofLiveJob = await job(db, tenant, 'succeeded', 31, { article_id: live });
    const ofLive = await media(db, tenant, ofLiveJob, 31);
    // Made for a gone article but shown by another one.
    const reusedJob = await job(db, tenant, 'succeeded', 31, { article_id: gone });
    const reused = await media(db, tenant, reusedJob, 31);
    await article(db, tenant, { featured: reused });
    // Made without an article, and uploaded or otherwise made without a job: project images, kept.
    const looseJob = await job(db, tenant, 'succeeded', 31, {});
    const loose = await media(db, tenant, looseJob, 31);
    const noJob = await media(db, tenant, null, 300);
    const articlesBefore = await db.query(`SELECT id, featured_image_id, deleted_at FROM articles WHERE account_id = $1 ORDER BY id`, [tenant.accountId]);

    const removed: Partial<Record<RetentionTable, number>> = {};
    await t.app.get(RetentionService).purge({ batch: 2, pauseMs: 0, onBatch: (table, n) => void (removed[table] = (removed[table] ?? 0) + n) });

    expect(await ids(db, 'media', tenant)).toEqual([recentOfGone, ofTrashed, ofLive, reused, loose, noJob].sort());
    // The gone article's old image went, then its job (a job that made an article's image stays while the image does);
    // the job of the image made without an article went, the image stays.
    expect(await ids(db, 'jobs', tenant)).toEqual([recentDone, running, queued, recentOfGoneJob, ofTrashedJob, ofLiveJob, reusedJob].sort());
    const left = [...(await ids(db, 'jobs', tenant)), ...(await ids(db, 'media', tenant))];
    expect(left.filter((id) => [oldDone, oldFailed, oldCancelled, ofGoneJob, ofGone, looseJob].includes(id))).toEqual([]);
    expect(await db.query(`SELECT id, featured_image_id, deleted_at FROM articles WHERE account_id = $1 ORDER BY id`, [tenant.accountId])).toEqual(
      articlesBefore,
    );
    expect(removed.media).toBeGreaterThanOrEqual(1);
    expect(removed.jobs).toBeGreaterThanOrEqual(5);
  });

  it('purges audit events older than AUDIT_RETENTION_DAYS, and keeps the younger ones', async () => {
    const tag = `retention-test-${randomUUID()}`;
    await db.query(
      `INSERT INTO audit_events (id, at, actor_type, action, request_id)
         SELECT gen_random_uuid(), now() - make_interval(days => d), 'operator', 'project.created', $1 FROM unnest(ARRAY[401, 402, 399]) d`,
      [tag],
    );
    const result = await t.app.get(RetentionService).purge({ batch: 1, pauseMs: 0 });
    expect(result.skipped ? -1 : result.removed.audit_events).toBeGreaterThanOrEqual(2);
    const left: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM audit_events WHERE request_id = $1`, [tag]);
    expect(left[0].n).toBe(1);
  });
});
