import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Job } from './job.entity.js';

/**
 * A job's side effect (the article, the image), written by the worker in the same transaction
 * that marks the job succeeded, and only while the job is still this worker's and not cancelled.
 * Returns the job's result: what the tool answers.
 */
export type JobEffect = (manager: EntityManager) => Promise<Record<string, unknown>>;

/** Runs one kind of job; the kind is the name of the tool that enqueues it. */
export interface JobHandler {
  /**
   * Does the slow work, stopping with the signal's reason when it aborts (cancellation, lost
   * lease, shutdown), and returns the effect to commit. A `DomainError` fails the job with its
   * code and message, which the calling model reads; any other error is retried with backoff.
   */
  prepare(job: Job, signal: AbortSignal, progress: (fraction: number) => void): Promise<JobEffect>;
}

/** The handlers of this process, by job kind; domain modules register theirs at init. */
@Injectable()
export class JobHandlers {
  private readonly handlers = new Map<string, JobHandler>();

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`Two job handlers for "${kind}".`);
    this.handlers.set(kind, handler);
  }

  get(kind: string): JobHandler | undefined {
    return this.handlers.get(kind);
  }

  kinds(): string[] {
    return [...this.handlers.keys()];
  }
}
