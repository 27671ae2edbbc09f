import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { isUuid, newId } from '../common/ids.js';
import { currentTraceparent } from '../common/telemetry.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { JobEventsService } from './job-events.service.js';
import { isTerminal, type Job, type JobStatus } from './job.entity.js';
import { JobsRepository } from './jobs.repository.js';

export interface JobView {
  id: string;
  tool: string;
  project_id: string;
  status: Job['status'];
  progress: number;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface JobFilter {
  status?: string;
  project_id?: string;
  /** Restricts to these projects (a credential's reachable ones). */
  project_ids?: string[];
}

export interface NewJob {
  accountId: string;
  projectId: string;
  credentialId: string | null;
  /** The kind of job: the tool that enqueues it. */
  tool: string;
  args: Record<string, unknown>;
  /** Identifies the MCP request that started it, for `notifications/cancelled`. */
  requestKey?: string | null;
}

export interface JobListing {
  items: JobView[];
  pagination: { total: number; page: number; page_size: number; pages: number };
}

/**
 * A waiting call learns of its job's end from the job's notification; it reads the job again this
 * often only as a safety net, in case a notification was lost (it also re-reads when the LISTEN
 * connection came back).
 */
export const WAIT_SAFETY_READ_MS = 10_000;

/** The jobs of a tenant: enqueue, read, list, cancel, and wait for one to finish. The worker is {@link JobWorkerService}. */
@Injectable()
export class JobsService {
  private readonly log = new Logger(JobsService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly jobs: JobsRepository,
    private readonly events: JobEventsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Queues a job and wakes the workers (the notification is sent when the insert commits). An
   * account with JOBS_MAX_QUEUED_PER_ACCOUNT jobs queued already gets a `too_many_jobs` error
   * instead, so one client cannot fill the queue that every tenant waits in. When the request that
   * asks for it was already cancelled ({@link cancelByRequest} remembered it), the job is cancelled
   * at once and returned so.
   */
  async enqueue(input: NewJob): Promise<Job> {
    const limit = this.config.jobsMaxQueuedPerAccount;
    const job = await this.db.transaction(async (m) => {
      // Count and insert under a lock of the account, held to the commit: concurrent calls, on any
      // instance, queue one after the other and never overshoot the cap.
      await this.jobs.lockEnqueue(input.accountId, m);
      const queued = await this.jobs.countQueued(input.accountId, m);
      if (queued >= limit) {
        throw new DomainError(
          'too_many_jobs',
          `This account already has ${queued} jobs queued, the most it may have (limit ${limit}); wait for one to finish (get_job) or cancel one (cancel_job), then call ${input.tool} again.`,
          { queued, limit },
        );
      }
      return this.jobs.insert({ ...input, id: newId(), requestKey: input.requestKey ?? null, traceContext: currentTraceparent() }, m);
    });
    if (!input.requestKey) return job;
    // A statement of its own, after the insert committed: a cancellation remembered too late for this
    // statement to see it is followed by cancelByRequest's own update, which sees the job.
    return (await this.jobs.cancelIfRequestCancelled(job.id, input.credentialId, input.requestKey)) ?? job;
  }

  /** The job if it belongs to the account and to one of `projectIds`, else null (another tenant's job is an unknown one). */
  async find(accountId: string, projectIds: readonly string[], id: string): Promise<Job | null> {
    if (!isUuid(id)) return null;
    return this.jobs.find(accountId, projectIds, id);
  }

  /** Like {@link find}, but an unknown job is a `not_found` error. */
  /** How many jobs are queued and running in these projects of the account. */
  async countActive(accountId: string, projectIds: readonly string[]): Promise<{ queued: number; running: number }> {
    if (!projectIds.length) return { queued: 0, running: 0 };
    return this.jobs.countActive(accountId, projectIds);
  }

  async get(accountId: string, projectIds: readonly string[], id: string): Promise<Job> {
    const job = await this.find(accountId, projectIds, id);
    if (!job) throw new DomainError('not_found', `No job with id "${id}"; list_jobs lists the jobs of a project.`);
    return job;
  }

  /** Jobs of one project, newest first, by page (the `list_jobs` tool). */
  async listPage(accountId: string, projectId: string, q: { status?: JobStatus; page: number; page_size: number }): Promise<JobListing> {
    const { total, jobs } = await this.jobs.pageInProject(accountId, projectId, q.status, q.page_size, (q.page - 1) * q.page_size);
    return { items: jobs.map(jobView), pagination: { total, page: q.page, page_size: q.page_size, pages: Math.ceil(total / q.page_size) } };
  }

  /** Jobs of an account by cursor (admin API). */
  async list(accountId: string, filter: JobFilter, limit = 50, cursor?: string): Promise<Page<JobView>> {
    const rows = await this.jobs.list(
      accountId,
      { after: decodeCursor(cursor), status: filter.status, projectId: filter.project_id, projectIds: filter.project_ids },
      limit + 1,
    );
    return toPage(rows, limit, jobView);
  }

  /**
   * Cancels a queued or running job at once: the worker running it is told (NOTIFY, and its next
   * heartbeat), and its side effect can no longer commit. A finished job is an `invalid_state` error.
   */
  async cancel(accountId: string, projectIds: readonly string[], id: string): Promise<Job> {
    if (isUuid(id)) {
      const job = await this.jobs.cancel(accountId, projectIds, id);
      if (job) return job;
    }
    const job = await this.get(accountId, projectIds, id);
    throw new DomainError('invalid_state', `Job "${id}" already ${job.status}; a finished job cannot be cancelled.`, { status: job.status });
  }

  /**
   * `notifications/cancelled`: cancels the job an in-flight request of this credential started, if
   * any. The cancellation is kept first (for an hour), so a call that creates its
   * job after this cancels it itself ({@link enqueue}).
   */
  async cancelByRequest(accountId: string, credentialId: string, requestKey: string): Promise<Job | null> {
    await this.jobs.rememberCancelledRequest(credentialId, requestKey);
    return this.jobs.cancelByRequest(accountId, credentialId, requestKey);
  }

  /** The job as it is now (a waiting call's read). */
  reread(job: Pick<Job, 'id' | 'account_id'>): Promise<Job | null> {
    return this.jobs.reread(job.id, job.account_id);
  }

  /**
   * Waits up to `budgetMs` for the job to finish: resolves with the finished job, or with null
   * when the budget runs out or `signal` aborts (the job keeps running). Progress is reported
   * as it is recorded, by whichever instance runs the job.
   */
  waitFor(job: Job, budgetMs: number, signal: AbortSignal, onProgress?: (progress: number) => void): Promise<Job | null> {
    if (budgetMs <= 0 || signal.aborted) return Promise.resolve(null);
    return new Promise<Job | null>((resolve) => {
      let settled = false;
      let reported = job.progress;
      const report = (progress: number) => {
        if (progress > reported) {
          reported = progress;
          onProgress?.(progress);
        }
      };
      const check = async () => {
        try {
          const row = await this.reread(job);
          if (!row || settled) return;
          if (isTerminal(row.status)) finish(row);
          else report(row.progress);
        } catch (err) {
          this.log.warn(`Reading job ${job.id} while waiting failed: ${(err as Error).message}`);
        }
      };
      // Subscribed before the first read, so no end is missed between the two.
      const off = this.events.onJob(job.id, (event) => {
        if (event.kind === 'progress') report(event.progress);
        else if (event.kind === 'status' && isTerminal(event.status)) void check();
      });
      const offReconnect = this.events.onReconnect(() => void check());
      const poll = setInterval(() => void check(), WAIT_SAFETY_READ_MS);
      const timer = setTimeout(() => finish(null), budgetMs);
      const onAbort = () => finish(null);
      signal.addEventListener('abort', onAbort, { once: true });
      function finish(result: Job | null) {
        if (settled) return;
        settled = true;
        off();
        offReconnect();
        clearInterval(poll);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      }
      // It may have finished before the subscription above.
      void check();
    });
  }
}

export function jobView(j: Job): JobView {
  return {
    id: j.id,
    tool: j.tool,
    project_id: j.project_id,
    status: j.status,
    progress: j.progress,
    ...(j.result ? { result: j.result } : {}),
    ...(j.error ? { error: j.error } : {}),
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: j.finished_at,
  };
}
