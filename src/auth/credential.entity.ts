import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ProjectRole, Scope } from '../common/tool-names.js';

export type CredentialType = 'api_key' | 'grant';
/** Who made a grant: an operator through the admin API, or a person through the OAuth consent page. */
export type CredentialSource = 'admin' | 'oauth';
/** How an OAuth grant was made: a person's consent, or their identity provider's ID-JAG (null: not an OAuth grant). */
export type GrantVia = 'consent' | 'enterprise';
export type RevokedReason = 'admin' | 'user' | 'refresh_token_reuse' | 'code_replay' | 'client_deleted';

/** An API key or an OAuth grant: a hashed bearer secret of one account. */
@Entity('credentials')
export class Credential {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('text') type: CredentialType;
  @Column('text') name: string;
  /** Null for an OAuth grant: its bearer secrets are its rows in `oauth_tokens`. */
  @Column('bytea', { nullable: true }) secret_hash: Buffer | null;
  @Column('text') secret_prefix: string;
  @Column('text', { array: true }) scopes: Scope[];
  @Column('timestamptz', { nullable: true }) expires_at: Date | null;
  @Column('timestamptz', { nullable: true }) revoked_at: Date | null;
  @Column('timestamptz') created_at: Date;
  @Column('text') source: CredentialSource;
  /** The person an OAuth grant acts for (its reach follows their current roles); null for admin-made credentials. */
  @Column('uuid', { nullable: true }) user_id: string | null;
  @Column('text', { nullable: true }) client_id: string | null;
  @Column('text', { nullable: true }) revoked_reason: RevokedReason | null;
  /** The person who made it: in the console, or by consenting (an OAuth grant); null for the operator (admin token). */
  @Column('uuid', { nullable: true }) created_by: string | null;
  @Column('text', { nullable: true }) via: GrantVia | null;
}

@Entity('credential_projects')
export class CredentialProject {
  @PrimaryColumn('uuid') credential_id: string;
  @PrimaryColumn('uuid') project_id: string;
  @Column('uuid') account_id: string;
  @Column('text') role: ProjectRole;
}
