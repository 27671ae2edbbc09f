import { Column, Entity, PrimaryColumn } from 'typeorm';

export const OUTCOMES = ['ok', 'tool_error', 'setup_required', 'invalid', 'denied', 'rate_limited'] as const;
export type Outcome = (typeof OUTCOMES)[number];

@Entity('activity_log')
export class ActivityEntry {
  @PrimaryColumn('uuid') id: string;
  @Column('timestamptz') at: Date;
  @Column('uuid') account_id: string;
  @Column('text') credential_type: string;
  @Column('uuid') credential_id: string;
  @Column('text') credential_name: string;
  @Column('text', { nullable: true }) client_name: string | null;
  @Column('text', { nullable: true }) client_version: string | null;
  @Column('text', { nullable: true }) session_id: string | null;
  @Column('text') method: string;
  @Column('text', { nullable: true }) tool: string | null;
  @Column('uuid', { nullable: true }) project_id: string | null;
  @Column('text') outcome: Outcome;
  @Column('jsonb', { nullable: true }) error: { code: number; message: string } | null;
  @Column('int') duration_ms: number;
  @Column('int') count: number;
  /** `<outcome>:<credential id>:<unix second>` on folded refusals (one row per credential per second); null otherwise. */
  @Column('text', { nullable: true }) fold_key: string | null;
  /** The request's `X-Request-Id` (the gateway's, or the one the server made); null on entries older than it and on folded refusals. */
  @Column('text', { nullable: true }) request_id: string | null;
}
