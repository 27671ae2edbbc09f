import { Injectable } from '@nestjs/common';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { roleAtLeast } from '../common/tool-names.js';
import type { ToolDefinition } from './mcp-tool.decorator.js';
import { ToolRegistry, type CatalogueTool } from './tool-registry.js';

/**
 * What a principal may see and run (docs/protocol.md#who-calls-and-what-they-reach): a tool is in its
 * catalogue when the credential has the tool's scope and at least one reachable project lets it run
 * the tool (role high enough, tool not disabled there).
 */
@Injectable()
export class ToolAccess {
  /** `tools/list` results per principal, without and with the MCP Apps views; principals are short-lived cache entries themselves. */
  private readonly listings = new WeakMap<Principal, { plain?: string; views?: string }>();

  constructor(private readonly registry: ToolRegistry) {}

  /** The tool as this principal sees it: undefined when it is not in the principal's catalogue. */
  find(principal: Principal, name: string): CatalogueTool | undefined {
    const tool = this.registry.get(name);
    return tool && this.visible(principal, tool.definition) ? tool : undefined;
  }

  /**
   * The JSON of `{"tools":[...]}` for this principal, filtered by scope and by reachable projects; with
   * `views` (a client that renders MCP Apps views), each tool with a view names it.
   */
  list(principal: Principal, views = false): string {
    let listings = this.listings.get(principal);
    if (listings === undefined) this.listings.set(principal, (listings = {}));
    const key = views ? 'views' : 'plain';
    return (listings[key] ??= this.registry.list((definition) => this.visible(principal, definition), listsProjectId(principal), views));
  }

  /** Projects where `principal` may run `definition`: role high enough and the tool not disabled. */
  allowedProjects(principal: Principal, definition: ToolDefinition): ReachableProject[] {
    const allowed: ReachableProject[] = [];
    for (const project of principal.projects.values()) if (permits(project, definition)) allowed.push(project);
    return allowed;
  }

  private visible(principal: Principal, definition: ToolDefinition): boolean {
    if (!principal.scopes.has(definition.scope)) return false;
    // A credential that reaches no project (an OAuth grant whose person lost every one, docs/oauth.md#grants-follow-their-person) still
    // has list_projects, which answers that it reaches nothing, and no other tool.
    if (principal.projects.size === 0) return definition.name === 'list_projects';
    for (const project of principal.projects.values()) if (permits(project, definition)) return true;
    return false;
  }
}

/**
 * Whether the catalogue of `principal` gives project-scoped tools a `project_id` argument: it reaches
 * several projects. With one, the project is inferred and the listed schemas have no such argument,
 * so nothing should tell the model to pass one.
 */
export function listsProjectId(principal: Principal): boolean {
  return principal.projects.size > 1;
}

/** Whether `project` lets its holder run `definition`: role high enough and the tool not disabled there. */
export function permits(project: ReachableProject, definition: ToolDefinition): boolean {
  return roleAtLeast(project.role, definition.role) && !project.disabledTools.has(definition.name);
}

/** Why `project` does not let its holder run `definition`, in a sentence naming where it can run. */
export function refusal(project: ReachableProject, definition: ToolDefinition, allowed: ReachableProject[]): string {
  const { name } = definition;
  const where = allowed.map((p) => `"${p.name}" (${p.id})`).join(', ');
  const why = project.disabledTools.has(name)
    ? `${name} is disabled in project "${project.name}"`
    : `your role in project "${project.name}" is ${project.role}; ${name} needs ${definition.role} or higher`;
  return `You cannot run ${name} here: ${why}. It can run in: ${where}.`;
}
