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
