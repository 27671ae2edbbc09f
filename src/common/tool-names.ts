/**
 * Names of the product's MCP tools. `disabled_tools` of a project is validated against this list,
 * and the MCP catalogue warns at boot about a registered tool missing from it (or the reverse).
 */
export const TOOL_NAMES = [
  'list_projects',
  'list_articles',
  'get_article',
  'create_article',
  'update_article',
  'publish_article',
  'delete_article',
  'configure_agent',
  'get_agent_config',
  'write_article',
  'generate_image',
  'list_jobs',
  'get_job',
  'cancel_job',
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

export const SCOPES = ['read', 'write', 'generate', 'delete'] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ['viewer', 'editor', 'owner'] as const;
export type ProjectRole = (typeof ROLES)[number];

/** Whether `role` is at least `lowest` in viewer < editor < owner. */
export function roleAtLeast(role: ProjectRole, lowest: ProjectRole): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(lowest);
}
