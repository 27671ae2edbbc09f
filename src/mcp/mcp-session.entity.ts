import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('mcp_sessions')
export class McpSession {
  @PrimaryColumn('text') id: string;
  @Column('uuid') account_id: string;
  @Column('uuid') credential_id: string;
  @Column('text') protocol_version: string;
  @Column('text', { nullable: true }) client_name: string | null;
  @Column('text', { nullable: true }) client_version: string | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz', { nullable: true }) ended_at: Date | null;
  /** Touched at most once per tenth of `SESSION_IDLE_TTL_S`; older than the TTL, the session has expired. */
  @Column('timestamptz') last_used_at: Date;
  /** The client's declared capabilities from `initialize` (known keys only). */
  @Column('jsonb') client_capabilities: Record<string, unknown>;
  /** Set by `logging/setLevel`; null: no log messages are sent. */
  @Column('text', { nullable: true }) log_level: string | null;
}
