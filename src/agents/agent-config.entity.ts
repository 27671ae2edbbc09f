import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('agent_configs')
export class AgentConfig {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('uuid') project_id: string;
  @Column('text') agent: string;
  @Column('int') version: number;
  @Column('jsonb') answers: Record<string, string>;
  @Column('uuid', { nullable: true }) credential_id: string | null;
  @Column('timestamptz') created_at: Date;
}
