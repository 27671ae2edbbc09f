import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { DomainError, type DomainErrorCode } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { LifecycleService } from '../health/lifecycle.service.js';
import type { Job } from '../jobs/job.entity.js';
import { JobsService } from '../jobs/jobs.service.js';
import { MediaService } from '../media/media.service.js';
import { ToolReply, type ContentBlock, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { RequestCancellation } from '../protocol/request-cancellation.js';

/** Told to a caller whose job outlives the call: when to call get_job. */
export const POLL_AFTER_S = 5;

/**
 * What a heartbeat adds to the progress last reported: far below the job's own steps (thousandths),
 * even after a heartbeat every 100 ms for the longest budget, so the job's next value still increases.
 */
const HEARTBEAT_NUDGE = 1e-7;

function percent(fraction: number): number {
  return Math.round(fraction * 100);
}

/**
 * How the job tools answer: `write_article` and `generate_image` enqueue a job and wait for it within
 * the call's budget (reporting its progress), and every finished job reads the same way from the tool
 * that started it and from `get_job`.
 */
@Injectable()
export class JobReplies implements OnModuleInit {
  constructor(
    private readonly jobs: JobsService,
    private readonly media: MediaService,
    private readonly cancellation: RequestCancellation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly lifecycle?: LifecycleService,
  ) {}

  onModuleInit(): void {
    // notifications/cancelled for a call that started a job cancels the job, on whichever instance it
    // arrives, also when it arrives before the call has created the job.
    this.cancellation.register(async (principal, requestKey) => {
      await this.jobs.cancelByRequest(principal.accountId, principal.credential.id, requestKey);
    });
  }

  /**
   * Enqueues the job and answers its result, or `{"status":"running","job_id","poll_after_s"}` when it
   * outlives the call's budget: SYNC_BUDGET_MS when the client can be kept waiting (its progress reaches
   * it, and it hears at least every PROGRESS_HEARTBEAT_MS), else the smaller SYNC_BUDGET_SILENT_MS,
   * so that the job id comes before the common clients' 60 s timeout cancels the call and its job.
   */
  async run(ctx: ToolContext, tool: string, args: Record<string, unknown>): Promise<object | ToolReply> {
    const job = await this.jobs.enqueue({
      accountId: ctx.principal.accountId,
      projectId: ctx.project.id,
      credentialId: ctx.principal.credential.id,
      tool,
      args,
      requestKey: ctx.requestKey,
    });
    // Cancelled before it was created (notifications/cancelled overtook the call): answered as cancelled at once.
    if (job.status === 'cancelled') return this.answer(job);
    const budget = ctx.keptAlive ? this.config.syncBudgetMs : Math.min(this.config.syncBudgetMs, this.config.syncBudgetSilentMs);
    const finished = budget > 0 ? await this.whileServing(ctx.signal, (signal) => this.waitReporting(ctx, job, budget, signal)) : null;
    if (!finished) return { status: 'running', job_id: job.id, poll_after_s: POLL_AFTER_S };
    if (finished.status === 'succeeded') ctx.progress(1, `${tool}: done (job ${job.id})`);
    return this.answer(finished);
  }

  /**
   * Waits for the job, reporting its progress as it is recorded and, when it has none to report for
   * PROGRESS_HEARTBEAT_MS, the same progress again (a hair higher: MCP wants each value to increase),
   * so that a client which resets its timeout on progress keeps waiting through a silent provider.
   */
  private async waitReporting(ctx: ToolContext, job: Job, budget: number, signal: AbortSignal): Promise<Job | null> {
    /** The job's own progress, and the value last sent (the job's, or a heartbeat's a hair above it). */
    let done = 0;
    let sent = 0;
    const send = (value: number, message: string) => {
      sent = value;
      ctx.progress(value, message);
      heartbeat.refresh();
    };
    const heartbeat = setInterval(
      () => send(sent + HEARTBEAT_NUDGE, `${job.tool}: still working, ${percent(done)}% done (job ${job.id})`),
      this.config.progressHeartbeatMs,
    );
    send(0, `${job.tool}: job ${job.id} queued`);
    try {
      return await this.jobs.waitFor(job, budget, signal, (p) => {
        done = p;
        send(Math.max(p, sent + HEARTBEAT_NUDGE), `${job.tool}: ${percent(p)}% done (job ${job.id})`);
      });
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Runs `wait` with a signal that also aborts when this instance starts draining: the caller gets its job id and polls another instance. */
  private async whileServing<T>(signal: AbortSignal, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    if (signal.aborted) stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const draining = setInterval(() => {
      if (this.lifecycle?.draining) stop.abort();
    }, 250);
    try {
      return await wait(stop.signal);
    } finally {
      clearInterval(draining);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** What the tool answers for a finished job: its result (with the image block), or a tool error saying why there is none. */
  async answer(job: Job): Promise<object | ToolReply> {
    if (job.status === 'failed') {
      const error = job.error ?? { code: 'unavailable', message: 'The job failed.' };
      throw new DomainError(error.code as DomainErrorCode, `The ${job.tool} job ${job.id} failed: ${error.message}`, { job_id: job.id });
    }
    if (job.status === 'cancelled') {
      throw new DomainError('invalid_state', `The ${job.tool} job ${job.id} was cancelled, so nothing was written; call ${job.tool} again to start over.`, {
        job_id: job.id,
      });
    }
    return new ToolReply(job.result ?? {}, await this.imageContent(job));
  }

  /** The MCP `image` block of a succeeded image job (none for other jobs). */
  async imageContent(job: Job): Promise<ContentBlock[]> {
    const media = job.status === 'succeeded' ? (job.result?.media as { id?: string } | undefined) : undefined;
    if (!media?.id) return [];
    const stored = await this.media.findWithData(job.account_id, [job.project_id], media.id);
    return stored ? [{ type: 'image', data: stored.data.toString('base64'), mimeType: stored.mime_type }] : [];
  }
}
