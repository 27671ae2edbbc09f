import { Column, Entity, PrimaryColumn } from 'typeorm';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A job in one of these states never changes again. */
export const TERMINAL_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];
export const isTerminal = (status: JobStatus): boolean => TERMINAL_STATUSES.includes(status);

@Entity('jobs')
export class Job {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('uuid') project_id: string;
  @Column('uuid', { nullable: true }) credential_id: string | null;
  @Column('text') tool: string;
  @Column('jsonb') args: Record<string, unknown>;
  @Column('text') status: JobStatus;
  @Column('real') progress: number;
  @Column('jsonb', { nullable: true }) result: Record<string, unknown> | null;
  @Column('jsonb', { nullable: true }) error: { code: string; message: string } | null;
  @Column('int') attempts: number;
  @Column('int') max_attempts: number;
  @Column('timestamptz') run_after: Date;
  @Column('text', { nullable: true }) locked_by: string | null;
  @Column('timestamptz', { nullable: true }) locked_until: Date | null;
  @Column('boolean') cancel_requested: boolean;
  /** The MCP request that started the job (session or credential, and JSON-RPC id), for `notifications/cancelled`. */
  @Column('text', { nullable: true }) request_key: string | null;
  /** The W3C `traceparent` of the call that queued it (while tracing is on): each run's span links to it. */
  @Column('text', { nullable: true }) trace_context: string | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz', { nullable: true }) started_at: Date | null;
  @Column('timestamptz', { nullable: true }) finished_at: Date | null;
}
