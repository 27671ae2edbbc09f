import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ProjectRole, Scope } from '../common/tool-names.js';

export type CredentialType = 'api_key' | 'grant';

/** An API key or an OAuth grant: a hashed bearer secret of one account. */
@Entity('credentials')
export class Credential {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('text') type: CredentialType;
  @Column('text') name: string;
  @Column('bytea') secret_hash: Buffer;
  @Column('text') secret_prefix: string;
  @Column('text', { array: true }) scopes: Scope[];
  @Column('timestamptz', { nullable: true }) expires_at: Date | null;
  @Column('timestamptz', { nullable: true }) revoked_at: Date | null;
  @Column('timestamptz') created_at: Date;
}

@Entity('credential_projects')
export class CredentialProject {
  @PrimaryColumn('uuid') credential_id: string;
  @PrimaryColumn('uuid') project_id: string;
  @Column('uuid') account_id: string;
  @Column('text') role: ProjectRole;
}
