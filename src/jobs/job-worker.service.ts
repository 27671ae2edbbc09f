import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SpanKind } from '@opentelemetry/api';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { linksTo, tracer, tracingOn } from '../common/telemetry.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { MetricsService, type JobRunOutcome } from '../metrics/metrics.service.js';
import { JobEventsService } from './job-events.service.js';
import { JobHandlers, type JobEffect } from './job-handlers.js';
import { isTerminal, type Job } from './job.entity.js';
import { JobsRepository } from './jobs.repository.js';

/** How long a claim lasts without a heartbeat; a job whose worker died is taken up again after it. */
export const LEASE_SECONDS = 10;
/** How often a worker renews the leases of its running jobs (and checks they are still its own). */
export const HEARTBEAT_MS = 3_000;
/** How often each worker looks for expired leases. */
export const SWEEP_MS = 2_000;
/** How often a worker looks for due jobs without being notified (retries after backoff, missed notifications). */
export const POLL_MS = 1_000;
/** Jobs one worker process runs at the same time. */
export const CONCURRENCY = 4;
/** How long shutdown waits for running jobs to stop after handing them back. */
const STOP_WAIT_MS = 5_000;

/** Why a run was stopped from outside. */
type StopReason = 'cancelled' | 'lease_lost' | 'shutdown';

interface Run {
  job: Job;
  /** The claim's `attempts` value: with `locked_by` it fences every write of this run. */
  attempt: number;
  abort: AbortController;
  done: Promise<void>;
  /** Set before the run's own final write: the status notification it causes is not news. */
  finishing: boolean;
  progress: { pending: number; written: number; writing: boolean };
}

class LeaseLost extends Error {
  override name = 'LeaseLost';
}

/**
 * The job worker of this process (ROLE=worker or all): claims due jobs with `FOR UPDATE SKIP
 * LOCKED`, holds them with a heartbeat lease, runs their handler, and commits the side effect and
 * the terminal state in one transaction fenced by the lease. Every transition is a conditional
 * UPDATE, so a terminal state never changes and a cancelled or reclaimed run writes nothing.
 */
@Injectable()
export class JobWorkerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(JobWorkerService.name);
  /** Unique per process; stored in `locked_by`. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly runs = new Map<string, Run>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** The timers' work in flight (claims, heartbeats, sweeps). */
  private readonly ticks = new Set<Promise<void>>();
  private readonly unsubscribe: (() => void)[] = [];
  private started = false;
  private stopping = false;
  private filling = false;
  private fillAgain = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly jobs: JobsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: JobEventsService,
    private readonly handlers: JobHandlers,
    @Optional() private readonly metrics?: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.role === 'api' || !this.handlers.kinds().length) return;
    this.started = true;
    this.unsubscribe.push(
      this.events.onAny((event) => {
        if (event.kind === 'new') void this.fill();
        // Only a terminal status is final; a requeue is noticed by the heartbeat (this process may hold a newer claim).
        else if (event.kind === 'status' && isTerminal(event.status)) {
          const run = this.runs.get(event.id);
          if (run && !run.finishing) this.stop(event.id, event.status === 'cancelled' ? 'cancelled' : 'lease_lost');
        }
      }),
      this.events.onReconnect(() => {
        this.track(this.heartbeat());
        this.track(this.fill());
      }),
    );
    this.timers.push(
      setInterval(() => this.track(this.fill()), POLL_MS),
      setInterval(() => this.track(this.heartbeat()), HEARTBEAT_MS),
      setInterval(() => this.track(this.sweep()), SWEEP_MS),
    );
    for (const timer of this.timers) timer.unref();
    this.track(this.sweep().then(() => this.fill()));
  }

  /** Shutdown: stop claiming, hand the running jobs back to the queue (without using up an attempt), let them stop. */
  async onModuleDestroy(): Promise<void> {
    if (!this.started || this.stopping) return;
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const off of this.unsubscribe) off();
    // A sweep, claim or heartbeat already running finishes before the pools close under it.
    await Promise.allSettled(this.ticks);
    const runs = [...this.runs.values()];
    if (!runs.length) return;
    try {
      await this.jobs.handBack(this.id);
    } catch (err) {
      this.log.warn(`Could not hand running jobs back (their leases will expire instead): ${(err as Error).message}`);
    }
    for (const run of runs) run.abort.abort('shutdown' satisfies StopReason);
    // The repository closes its bookkeeping pool after this (at application shutdown).
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), new Promise((done) => setTimeout(done, STOP_WAIT_MS).unref())]);
  }

  /** Keeps a timer's work in flight until it settles, so shutdown can wait for it. */
  private track(work: Promise<void>): void {
    this.ticks.add(work);
    void work.finally(() => this.ticks.delete(work));
  }

  /** Claims due jobs while this process has free slots. */
  private async fill(): Promise<void> {
    if (!this.started || this.stopping) return;
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.filling = true;
    try {
      do {
        this.fillAgain = false;
        for (;;) {
          const free = CONCURRENCY - this.runs.size;
          if (free <= 0 || this.stopping) break;
          // A claim takes one job per account, so fewer than `free` does not mean the queue is empty.
          const claimed = await this.claim(free);
          for (const job of claimed) this.start(job);
          if (!claimed.length) break;
        }
      } while (this.fillAgain && !this.stopping);
    } catch (err) {
      this.log.warn(`Claiming jobs failed: ${(err as Error).message}`);
    } finally {
      this.filling = false;
    }
  }

  /**
   * Claims up to `limit` due jobs, fairly: among the accounts with a due job and fewer than
   * JOBS_MAX_RUNNING_PER_ACCOUNT running (on every instance), the ones with the fewest running go
   * first (ties: whose oldest due job is oldest), each with its oldest due job; one job per
   * account per claim, so a backlog of one account waits behind a single job of another. Claims of
   * all workers take turns on one advisory lock: each then counts the running jobs with the claims
   * before it committed, and the per-account cap holds across instances. A claim is one short
   * statement on a few rows (the queued cap bounds them), so the turns are short.
   */
  private claim(limit: number): Promise<Job[]> {
    return this.jobs.claim(this.id, limit, this.handlers.kinds(), LEASE_SECONDS, this.config.jobsMaxRunningPerAccount);
  }

  private start(job: Job): void {
    const run: Run = {
      job,
      attempt: job.attempts,
      abort: new AbortController(),
      done: Promise.resolve(),
      finishing: false,
      progress: { pending: 0, written: job.progress, writing: false },
    };
    this.runs.set(job.id, run);
    run.done = (tracingOn() ? this.traced(run) : this.execute(run)).finally(() => {
      this.runs.delete(job.id);
      void this.fill();
    });
  }

  /**
   * A run in a CONSUMER span of its own trace, linked to the call that queued the job (whichever
   * instance that was): its SQL statements and provider calls are its children.
   */
  private traced(run: Run): Promise<void> {
    const { job } = run;
    const attributes = {
      'reblog.job.id': job.id,
      'reblog.job.tool': job.tool,
      'reblog.job.attempt': run.attempt,
      'reblog.account.id': job.account_id,
      'reblog.project.id': job.project_id,
      'reblog.worker.id': this.id,
    };
    return tracer.startActiveSpan(`job ${job.tool}`, { kind: SpanKind.CONSUMER, root: true, links: linksTo(job.trace_context), attributes }, (span) =>
      this.execute(run).finally(() => span.end()),
    );
  }

  private async execute(run: Run): Promise<void> {
    const { job } = run;
    const signal = run.abort.signal;
    const startedAt = performance.now();
    let outcome: JobRunOutcome = 'stopped';
    try {
      const handler = this.handlers.get(job.tool);
      if (!handler) throw new Error(`No handler for jobs of kind "${job.tool}".`);
      const effect = await handler.prepare(job, signal, (fraction) => this.progress(run, fraction));
      signal.throwIfAborted();
      run.finishing = true;
      await this.complete(run, effect);
      outcome = 'succeeded';
    } catch (err) {
      // Cancelled, reclaimed or handed back: the job's state is someone else's now; write nothing.
      if (signal.aborted || err instanceof LeaseLost) return;
      run.finishing = true;
      outcome = err instanceof DomainError ? 'failed' : 'error';
      if (err instanceof DomainError) await this.fail(run, { code: err.code, message: err.message });
      else await this.retryOrFail(run, err as Error);
    } finally {
      this.metrics?.jobRun(job.tool, outcome, (performance.now() - startedAt) / 1000);
    }
  }

  /** The side effect and `succeeded`, in one transaction, only while the run still holds the job. */
  private async complete(run: Run, effect: JobEffect): Promise<void> {
    await this.db.transaction(async (m) => {
      const row = await this.jobs.lockForCompletion(run.job.id, m);
      if (!row || row.status !== 'running' || row.locked_by !== this.id || row.attempts !== run.attempt) throw new LeaseLost();
      const result = await effect(m);
      await this.jobs.succeed(run.job.id, result, m);
    });
  }

  private async fail(run: Run, error: { code: string; message: string }): Promise<void> {
    await this.jobs
      .fail(run.job.id, this.id, run.attempt, error)
      .catch((err: Error) => this.log.warn(`Could not mark job ${run.job.id} failed (its lease will expire): ${err.message}`));
  }

  /** An unexpected error: try again later with exponential backoff, or fail once the attempts are used up. */
  private async retryOrFail(run: Run, err: Error): Promise<void> {
    const { job } = run;
    this.log.error(`Job ${job.id} (${job.tool}) attempt ${run.attempt} failed: ${err.stack ?? err.message}`);
    if (run.attempt >= job.max_attempts) {
      return this.fail(run, {
        code: 'unavailable',
        message: `The job failed ${run.attempt} times because of an internal error; call ${job.tool} again later, and if it keeps failing tell the user the service has a problem.`,
      });
    }
    const backoff = Math.min(60, 2 ** (run.attempt - 1)) * (0.5 + Math.random() / 2);
    await this.jobs
      .retryLater(job.id, this.id, run.attempt, backoff)
      .catch((e: Error) => this.log.warn(`Could not requeue job ${job.id} (its lease will expire): ${e.message}`));
  }

  /** Records progress (never backwards, below 1 until the job succeeds); one write in flight per job, the latest value wins. */
  private progress(run: Run, fraction: number): void {
    // 1 means the provider is done: the job's success, written next, records it.
    if (!Number.isFinite(fraction) || fraction >= 1) return;
    const value = Math.round(Math.min(0.99, Math.max(0, fraction) * 0.95) * 1000) / 1000;
    const p = run.progress;
    if (value <= Math.max(p.pending, p.written)) return;
    p.pending = value;
    if (p.writing) return;
    p.writing = true;
    void (async () => {
      try {
        while (p.pending > p.written && !run.abort.signal.aborted) {
          const value = p.pending;
          await this.jobs.recordProgress(run.job.id, this.id, run.attempt, value);
          p.written = value;
        }
      } catch (err) {
        this.log.warn(`Could not record the progress of job ${run.job.id}: ${(err as Error).message}`);
      } finally {
        p.writing = false;
      }
    })();
  }

  /** Renews the leases of the running jobs; a job that is no longer this worker's (cancelled, reclaimed) is stopped. */
  private async heartbeat(): Promise<void> {
    if (!this.runs.size || this.stopping) return;
    const runs = [...this.runs.values()];
    try {
      const rows = await this.jobs.renewLeases(
        this.id,
        runs.map((r) => r.job.id),
        LEASE_SECONDS,
      );
      const held = new Map(rows.map((r) => [r.id, r.attempts]));
      for (const run of runs) {
        if (held.get(run.job.id) !== run.attempt && this.runs.get(run.job.id) === run) this.stop(run.job.id, 'lease_lost');
      }
    } catch (err) {
      this.log.warn(`Heartbeat failed: ${(err as Error).message}`);
    }
  }

  /** Takes back the jobs whose lease expired (their worker died or hung): queued again with backoff, or failed after the last attempt. */
  private async sweep(): Promise<void> {
    if (this.stopping) return;
    try {
      await this.jobs.reclaimExpired();
    } catch (err) {
      this.log.warn(`Reclaiming expired jobs failed: ${(err as Error).message}`);
    }
  }

  private stop(jobId: string, reason: StopReason): void {
    const run = this.runs.get(jobId);
    if (!run || run.abort.signal.aborted) return;
    this.log.log(`Job ${jobId} stopped: ${reason}`);
    run.abort.abort(reason);
  }
}
