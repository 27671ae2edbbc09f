import { roleAtLeast, type ProjectRole, type Scope } from '../common/tool-names.js';

/**
 * Who may cancel a job: a credential with the `write` scope, in a project where its role is
 * `editor` or higher. The cancel_job tool declares it, and the console's Cancel button follows it, so
 * both answer the same people; a job of a project below that role is as unknown as another account's.
 */
export const CANCEL_JOB = { scope: 'write', role: 'editor' } as const satisfies { scope: Scope; role: ProjectRole };

/** Whether a person or credential with this role in a project may cancel that project's jobs. */
export function mayCancelJobs(role: ProjectRole): boolean {
  return roleAtLeast(role, CANCEL_JOB.role);
}
