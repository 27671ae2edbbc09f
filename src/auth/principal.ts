import type { ProjectRole, Scope } from '../common/tool-names.js';
import type { CredentialType } from './credential.entity.js';

/** A project as a credential reaches it. */
export interface ReachableProject {
  id: string;
  name: string;
  role: ProjectRole;
  disabledTools: ReadonlySet<string>;
}

/** Who is calling: the account, the credential, what it may do and which projects it reaches. */
export interface Principal {
  accountId: string;
  credential: { type: CredentialType; id: string; name: string };
  scopes: ReadonlySet<Scope>;
  /** Reachable projects by id, in a stable order (oldest first). */
  projects: ReadonlyMap<string, ReachableProject>;
}
