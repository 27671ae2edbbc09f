/** Which project of which account a call acts on; every statement filters by both. */
export interface ProjectScope {
  accountId: string;
  projectId: string;
}
