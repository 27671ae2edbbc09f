import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RetentionRepository } from './retention.repository.js';

/** How often each instance offers to purge; the advisory lock lets one of them at a time do it. */
export const RETENTION_EVERY_MS = 10 * 60 * 1_000;
/** Rows deleted per statement: each batch is its own short transaction holding few row locks. */
export const RETENTION_BATCH = 500;
/** The pause after each full batch, so a large backlog leaves room for the requests' own writes. */
export const RETENTION_PAUSE_MS = 200;

export type RetentionTable = 'activity_log' | 'audit_events' | 'jobs' | 'media';

/** What one purge did: rows deleted per table, or `skipped` when another instance held the lock. */
export type RetentionResult = { skipped: true } | { skipped: false; removed: Record<RetentionTable, number> };

export interface RetentionOptions {
  /** Rows per statement ({@link RETENTION_BATCH}). */
  batch?: number;
  /** Pause between full batches, ms ({@link RETENTION_PAUSE_MS}). */
  pauseMs?: number;
  /** Called after each batch; tests use it to see the batches. */
  onBatch?: (table: RetentionTable, removed: number) => void | Promise<void>;
}

/**
 * Deletes what is past its retention (docs/operations.md#retention): activity entries older than
 * ACTIVITY_RETENTION_DAYS, audit events older than AUDIT_RETENTION_DAYS,
 * finished jobs and the generated images of articles deleted for good older than JOB_RETENTION_DAYS.
 * Every instance offers on a timer; a Postgres advisory lock, held on a connection of the purge's own,
 * lets one at a time work. Each batch is one short statement that skips rows others hold, followed by
 * a pause, so the purge never holds long locks or starves the requests.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(RetentionService.name);
  private timer: NodeJS.Timeout | null = null;
  private purging: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly repository: RetentionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /** Purges every table once if no other instance is purging. */
  async purge(options: RetentionOptions = {}): Promise<RetentionResult> {
    return this.repository.withConnection(async (db) => {
      if (!(await this.repository.tryLock(db))) return { skipped: true };
      try {
        const { activityRetentionDays: activity, auditRetentionDays: audit, jobRetentionDays: jobs } = this.config;
        const removed: Record<RetentionTable, number> = { activity_log: 0, audit_events: 0, jobs: 0, media: 0 };
        // One cutoff for the whole run, so every batch is the same index range.
        const activityCutoff = await this.repository.cutoff(db, activity);
        removed.activity_log = await this.inBatches('activity_log', options, (n) => this.repository.purgeActivity(db, activityCutoff, n));
        // The audit trail's append-only trigger lets through the deletion of rows over a day old only.
        removed.audit_events = await this.inBatches('audit_events', options, (n) => this.repository.purgeAudit(db, audit, n));
        // Images first: a job that made an image for an article is kept while the image is (the image's purge reads the article from it).
        removed.media = await this.inBatches('media', options, (n) => this.repository.purgeMedia(db, jobs, n));
        removed.jobs = await this.inBatches('jobs', options, (n) => this.repository.purgeJobs(db, jobs, n));
        this.metrics.retentionLastSuccess.setToCurrentTime();
        return { skipped: false, removed };
      } finally {
        await this.repository.unlock(db);
      }
    });
  }

  /** Runs `step` until it deletes less than a batch (or the app stops); answers the total. */
  private async inBatches(table: RetentionTable, options: RetentionOptions, step: (limit: number) => Promise<number>): Promise<number> {
    const batch = options.batch ?? RETENTION_BATCH;
    const pauseMs = options.pauseMs ?? RETENTION_PAUSE_MS;
    let total = 0;
    for (;;) {
      const n = await step(batch);
      total += n;
      if (n > 0) this.metrics.retentionRemoved.inc({ table }, n);
      await options.onBatch?.(table, n);
      if (n < batch || this.stopped) return total;
      if (pauseMs > 0) await sleep(pauseMs);
    }
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      this.purging = this.purge()
        .catch((err: Error) => this.log.warn(`Could not purge rows past their retention: ${err.message}`))
        .finally(() => {
          this.purging = null;
          if (this.timer) this.timer = setTimeout(tick, RETENTION_EVERY_MS).unref();
        });
    };
    this.timer = setTimeout(tick, 30_000).unref();
  }

  /** Stops offering on the timer; a purge under way runs on. Calling {@link purge} still works. */
  stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.stopTimer();
    await this.purging;
  }
}
