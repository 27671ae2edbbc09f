/** A person who signs in: the same person may belong to several accounts. */
export interface User {
  id: string;
  /** Unique case-insensitively: always stored lower-case. */
  email: string;
  name: string | null;
  disabled_at: Date | null;
  created_at: Date;
}

export type AccountRole = 'owner' | 'member';

/** An account a person belongs to, with their role there. */
export interface Membership {
  account_id: string;
  account_name: string;
  role: AccountRole;
}

/** A project where a person has a role: `owner` on every project of an account they own, else their project membership's. */
export interface ProjectRoleRow {
  project_id: string;
  name: string;
  role: 'viewer' | 'editor' | 'owner';
}

/** A person's membership of an account. */
export interface AccountMember {
  account_id: string;
  user_id: string;
  role: AccountRole;
}

/** A person's own role on a project (an account owner is `owner` on every project whatever this says). */
export interface ProjectMember {
  project_id: string;
  user_id: string;
  role: 'viewer' | 'editor' | 'owner';
}

/** A row of a members list: the member, their email, and where the row stands in the list (for its cursor). */
export type Listed<M> = M & { email: string; position: string };
