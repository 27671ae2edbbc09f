import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { idFloor } from '../activity/activity-reports.repository.js';
import { affected, row, sql, type Queryable } from '../database/sql.js';

/** The advisory lock key that lets one instance at a time purge (any bigint no other lock uses). */
const RETENTION_LOCK = 7_306_256_914_001;

const TRY_LOCK = sql<[key: number], { locked: boolean }>('retention.try_lock', `SELECT pg_try_advisory_lock($1::bigint) AS locked`);
const UNLOCK = sql<[key: number], { unlocked: boolean }>('retention.unlock', `SELECT pg_advisory_unlock($1::bigint) AS unlocked`);

const CUTOFF = sql<[days: number], { cutoff: Date }>('retention.cutoff', `SELECT now() - make_interval(days => $1) AS cutoff`);

// Activity ids are UUID v7, so the primary key is in time order: the oldest entries are an index range
// below the smallest id made at the cutoff ($1, plain values so that the range is the index condition);
// `at` decides at the edge.
const PURGE_ACTIVITY = sql<[floor: string, cutoff: Date, limit: number]>(
  'retention.purge_activity',
  `DELETE FROM activity_log WHERE id IN (
     SELECT id FROM activity_log WHERE id < $1::uuid AND at < $2 ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)`,
);

// A finished job that made an image for an article stays while the image does: the image's purge reads the article from it.
const PURGE_JOBS = sql<[days: number, limit: number]>(
  'retention.purge_jobs',
  `DELETE FROM jobs WHERE id IN (
     SELECT j.id FROM jobs j
      WHERE j.status IN ('succeeded', 'failed', 'cancelled') AND j.finished_at < now() - make_interval(days => $1)
        AND NOT (j.args ? 'article_id' AND EXISTS (SELECT 1 FROM media m WHERE m.job_id = j.id))
      ORDER BY j.finished_at LIMIT $2 FOR UPDATE OF j SKIP LOCKED)`,
);

// A generated image made for an article (`generate_image` with `article_id`) that no longer exists —
// purged from the trash, not merely in it — and that no other article shows.
const PURGE_MEDIA = sql<[days: number, limit: number]>(
  'retention.purge_media',
  `DELETE FROM media WHERE id IN (
     SELECT m.id FROM media m JOIN jobs j ON j.id = m.job_id
      WHERE m.created_at < now() - make_interval(days => $1)
        AND j.args ? 'article_id'
        AND NOT EXISTS (SELECT 1 FROM articles a WHERE a.id = CASE
              WHEN j.args->>'article_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (j.args->>'article_id')::uuid END)
        AND NOT EXISTS (SELECT 1 FROM articles a WHERE a.featured_image_id = m.id)
      ORDER BY m.created_at LIMIT $2 FOR UPDATE OF m SKIP LOCKED)`,
);

const PURGE_AUDIT = sql<[days: number, limit: number]>(
  'retention.purge_audit',
  `DELETE FROM audit_events WHERE ctid IN (
     SELECT ctid FROM audit_events WHERE at < now() - make_interval(days => $1) ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
);

/** The SQL of the retention purge: the lock that elects the purging instance, and one batch per table. */
@Injectable()
export class RetentionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A connection of its own: a session-level advisory lock belongs to the connection that took it. */
  async withConnection<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      return await work(runner.manager);
    } finally {
      await runner.release();
    }
  }

  async tryLock(db: Queryable): Promise<boolean> {
    return (await row(db, TRY_LOCK, [RETENTION_LOCK]))!.locked;
  }

  async unlock(db: Queryable): Promise<void> {
    await row(db, UNLOCK, [RETENTION_LOCK]);
  }

  /** The instant `days` days ago by Postgres' clock. */
  async cutoff(db: Queryable, days: number): Promise<Date> {
    return (await row(db, CUTOFF, [days]))!.cutoff;
  }

  purgeActivity(db: Queryable, cutoff: Date, limit: number): Promise<number> {
    return affected(db, PURGE_ACTIVITY, [idFloor(cutoff.getTime()), cutoff, limit]);
  }

  purgeJobs(db: Queryable, days: number, limit: number): Promise<number> {
    return affected(db, PURGE_JOBS, [days, limit]);
  }

  purgeMedia(db: Queryable, days: number, limit: number): Promise<number> {
    return affected(db, PURGE_MEDIA, [days, limit]);
  }

  purgeAudit(db: Queryable, days: number, limit: number): Promise<number> {
    return affected(db, PURGE_AUDIT, [days, limit]);
  }
}
