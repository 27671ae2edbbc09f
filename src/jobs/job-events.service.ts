import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { DatabaseNotifications } from '../database/notifications.service.js';
import type { JobStatus } from './job.entity.js';

/** The one Postgres channel every instance listens on for job events. */
export const JOB_CHANNEL = 'reblog_jobs';

/** What travels on {@link JOB_CHANNEL}: a new job to claim, a job's progress, or its new status. */
export type JobEvent = { kind: 'new' } | { kind: 'progress'; id: string; progress: number } | { kind: 'status'; id: string; status: JobStatus };

/** Reads a payload of {@link JOB_CHANNEL}, as the statements of JobsRepository write it. */
export function parseJobEvent(payload: string): JobEvent | null {
  if (payload === 'n') return { kind: 'new' };
  const [kind, id, value] = payload.split(':');
  if (!id || value === undefined) return null;
  if (kind === 'p') return { kind: 'progress', id, progress: Number(value) };
  if (kind === 's') return { kind: 'status', id, status: value as JobStatus };
  return null;
}

/**
 * Job events of every instance, fanned out in-process: workers learn of new jobs and of
 * cancellations, waiting tool calls learn of progress and of the end, whichever instance wrote them.
 * They arrive on the process's LISTEN connection ({@link DatabaseNotifications}); when it had to be
 * re-opened, listeners get a `reconnected` event, because notifications sent in between are lost
 * and must be made up for by reading the table.
 */
@Injectable()
export class JobEventsService {
  private readonly emitter = new EventEmitter();

  constructor(notifications: DatabaseNotifications) {
    // One listener per waiting call or running job.
    this.emitter.setMaxListeners(0);
    notifications.subscribe(JOB_CHANNEL, (payload) => {
      const event = parseJobEvent(payload);
      if (event) this.dispatch(event);
    });
    notifications.onReconnect(() => this.emitter.emit('reconnected'));
  }

  /** Events of one job (progress and status). Returns the function that unsubscribes. */
  onJob(id: string, listener: (event: JobEvent) => void): () => void {
    this.emitter.on(`job:${id}`, listener);
    return () => this.emitter.off(`job:${id}`, listener);
  }

  /** Every event: used by workers (new jobs, cancellations of the jobs they run). */
  onAny(listener: (event: JobEvent) => void): () => void {
    this.emitter.on('any', listener);
    return () => this.emitter.off('any', listener);
  }

  /** Called after the LISTEN connection came back: notifications may have been missed. */
  onReconnect(listener: () => void): () => void {
    this.emitter.on('reconnected', listener);
    return () => this.emitter.off('reconnected', listener);
  }

  /** Delivers an event in this process only (a worker telling its own waiters, without a round trip). */
  emitLocal(event: JobEvent): void {
    this.dispatch(event);
  }

  private dispatch(event: JobEvent): void {
    this.emitter.emit('any', event);
    if (event.kind !== 'new') this.emitter.emit(`job:${event.id}`, event);
  }
}
