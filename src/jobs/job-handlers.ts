import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
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

/**
 * Marks a provider as the {@link JobHandler} of one kind of job (`@JobHandler('write_article')`);
 * the jobs module finds it at boot.
 */
export const JobHandler = DiscoveryService.createDecorator<string>();

/** The handlers of this process, by job kind: the providers marked with {@link JobHandler}, found at boot. */
@Injectable()
export class JobHandlers implements OnModuleInit {
  private readonly handlers = new Map<string, JobHandler>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: JobHandler.KEY })) {
      const kind = this.discovery.getMetadataByDecorator(JobHandler, wrapper)!;
      if (this.handlers.has(kind)) throw new Error(`Two job handlers for "${kind}".`);
      this.handlers.set(kind, wrapper.instance as JobHandler);
    }
  }

  get(kind: string): JobHandler | undefined {
    return this.handlers.get(kind);
  }

  kinds(): string[] {
    return [...this.handlers.keys()];
  }
}
