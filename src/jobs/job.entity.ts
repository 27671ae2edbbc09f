import { Column, Entity, PrimaryColumn } from 'typeorm';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

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
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz', { nullable: true }) started_at: Date | null;
  @Column('timestamptz', { nullable: true }) finished_at: Date | null;
}
