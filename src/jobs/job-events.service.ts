import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { JobStatus } from './job.entity.js';

/** The one Postgres channel every instance listens on for job events. */
export const JOB_CHANNEL = 'reblog_jobs';

/** What travels on {@link JOB_CHANNEL}: a new job to claim, a job's progress, or its new status. */
export type JobEvent = { kind: 'new' } | { kind: 'progress'; id: string; progress: number } | { kind: 'status'; id: string; status: JobStatus };

/** SQL expressions building the NOTIFY payloads, so every writer speaks the same tiny format. */
export const notifyNew = `pg_notify('${JOB_CHANNEL}', 'n')`;
export const notifyStatus = (id: string, status: string) => `pg_notify('${JOB_CHANNEL}', 's:' || ${id} || ':' || ${status})`;
export const notifyProgress = (id: string, progress: string) => `pg_notify('${JOB_CHANNEL}', 'p:' || ${id} || ':' || ${progress})`;

const RECONNECT_MS = 1_000;

export function parseJobEvent(payload: string): JobEvent | null {
  if (payload === 'n') return { kind: 'new' };
  const [kind, id, value] = payload.split(':');
  if (!id || value === undefined) return null;
  if (kind === 'p') return { kind: 'progress', id, progress: Number(value) };
  if (kind === 's') return { kind: 'status', id, status: value as JobStatus };
  return null;
}

/**
 * LISTENs on {@link JOB_CHANNEL} with a dedicated `pg` client (a pooled connection cannot hold a
 * LISTEN) and fans the events out in-process: workers learn of new jobs and of cancellations,
 * waiting tool calls learn of progress and of the end, whichever instance wrote them.
 * The connection is re-opened when it drops; listeners get a `reconnected` event, because
 * notifications sent in between are lost and must be made up for by reading the table.
 */
@Injectable()
export class JobEventsService implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger(JobEventsService.name);
  private readonly emitter = new EventEmitter();
  private client: pg.Client | null = null;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    // One listener per waiting call or running job.
    this.emitter.setMaxListeners(0);
  }

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
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

  private async connect(reconnecting = false): Promise<void> {
    const url = (this.db.options as { url?: string }).url;
    const client = new pg.Client({ connectionString: url, application_name: 'reblog-mcp-listen', connectionTimeoutMillis: 5_000, keepAlive: true });
    client.on('notification', (msg) => {
      const event = msg.payload ? parseJobEvent(msg.payload) : null;
      if (event) this.dispatch(event);
    });
    // Only the current connection's loss matters; errors of a connection being set up reject connect().
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${JOB_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      if (!reconnecting) throw err;
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (reconnecting) {
      this.log.log('Job events: listening again');
      this.emitter.emit('reconnected');
    }
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.stopped || this.client !== client) return;
    this.client = null;
    this.log.warn(`Job events: the LISTEN connection dropped${err ? ` (${err.message})` : ''}; reconnecting`);
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect(true);
    }, RECONNECT_MS);
  }
}
