import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Gauge } from 'prom-client';
import type { DataSource } from 'typeorm';
import { meter } from '../common/telemetry.js';
import { row, sql } from '../database/sql.js';
import { LifecycleService } from '../health/lifecycle.service.js';
import { MetricsService } from './metrics.service.js';

interface QueueRow {
  queued: number;
  running: number;
  oldest_queued_s: number | null;
  oldest_running_s: number | null;
}

/** The queue across accounts (an operator's view), in one statement for every gauge of a scrape. */
const QUEUE = sql<[], QueueRow>(
  'metrics.job_queue',
  `
        SELECT count(*) FILTER (WHERE status = 'queued' AND run_after <= now())::int AS queued,
               count(*) FILTER (WHERE status = 'running')::int AS running,
               EXTRACT(EPOCH FROM now() - min(run_after) FILTER (WHERE status = 'queued' AND run_after <= now()))::float8 AS oldest_queued_s,
               EXTRACT(EPOCH FROM now() - min(started_at) FILTER (WHERE status = 'running'))::float8 AS oldest_running_s
          FROM jobs WHERE status IN ('queued', 'running')`,
);

/** A scrape never waits longer than this for the jobs table. */
const QUERY_TIMEOUT_MS = 2_000;

/**
 * Gauges read at scrape time: the job queue (depth and age of the oldest waiting job, from the
 * shared jobs table, across accounts: an operator's view) and this instance's drain state.
 */
@Injectable()
export class RuntimeMetrics {
  private readonly log = new Logger(RuntimeMetrics.name);
  private pending: Promise<QueueRow | null> | null = null;

  constructor(
    metrics: MetricsService,
    lifecycle: LifecycleService,
    @InjectDataSource() private readonly db: DataSource,
  ) {
    const registers = [metrics.registry];
    const queue = () => {
      // One query serves every gauge of a scrape.
      this.pending ??= this.readQueue().finally(() => setTimeout(() => (this.pending = null), 500).unref());
      return this.pending;
    };
    new Gauge({
      name: 'reblog_jobs',
      help: 'Jobs waiting (queued) and being run (running), all accounts.',
      labelNames: ['status'] as const,
      registers,
      async collect() {
        const row = await queue();
        this.set({ status: 'queued' }, row ? row.queued : NaN);
        this.set({ status: 'running' }, row ? row.running : NaN);
      },
    });
    new Gauge({
      name: 'reblog_jobs_oldest_age_seconds',
      help: 'Age of the oldest job that could run but waits (queued), and of the oldest one running, since it became runnable / started.',
      labelNames: ['status'] as const,
      registers,
      async collect() {
        const row = await queue();
        this.set({ status: 'queued' }, row ? (row.oldest_queued_s ?? 0) : NaN);
        this.set({ status: 'running' }, row ? (row.oldest_running_s ?? 0) : NaN);
      },
    });
    new Gauge({
      name: 'reblog_draining',
      help: '1 while this instance shuts down (readiness false).',
      registers,
      collect() {
        this.set(lifecycle.draining ? 1 : 0);
      },
    });
    new Gauge({
      name: 'reblog_http_requests_in_flight',
      help: 'Requests this instance is serving right now.',
      registers,
      collect() {
        this.set(lifecycle.inFlight);
      },
    });
    // The queue depth over OTLP too (a no-op unless the SDK was started: README.md#tracing), read at each export.
    meter()
      .createObservableGauge('reblog.jobs', { unit: '{job}', description: 'Jobs waiting (queued) and being run (running), all accounts.' })
      .addCallback(async (result) => {
        const row = await queue();
        if (!row) return;
        result.observe(row.queued, { 'reblog.job.status': 'queued' });
        result.observe(row.running, { 'reblog.job.status': 'running' });
      });
    lifecycle.onRefused = () => metrics.drainRefusals.inc();
  }

  private async readQueue(): Promise<QueueRow | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`no answer in ${QUERY_TIMEOUT_MS} ms`)), QUERY_TIMEOUT_MS)));
      return await Promise.race([row(this.db, QUEUE, []), timeout]);
    } catch (err) {
      this.log.warn(`Job queue gauges not read: ${(err as Error).message}`);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}
