import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { roleAtLeast, TOOL_NAMES } from '../common/tool-names.js';
import { McpTool, type McpToolHandler, type ObjectSchema, type ToolAnnotations, type ToolDefinition } from './mcp-tool.decorator.js';

/** A discovered tool, compiled once at boot. */
export interface CatalogueTool {
  definition: ToolDefinition;
  handler: McpToolHandler;
  validate: ValidateFunction;
  /** `tools/list` entries, serialised once: as declared, and with a required `project_id`. */
  listed: { plain: string; withProject: string };
}

export const PROJECT_ID_PROPERTY = { type: 'string', description: 'Id of the project to act on; see list_projects' };

/**
 * The tool catalogue: built from the providers marked with {@link McpTool} at boot, checked
 * (unique names, a schema each, every product tool present) and compiled once.
 */
@Injectable()
export class CatalogueService implements OnModuleInit {
  private readonly log = new Logger(CatalogueService.name);
  private readonly tools = new Map<string, CatalogueTool>();
  /** `tools/list` results per principal; principals are short-lived cache entries themselves. */
  private readonly listings = new WeakMap<Principal, string>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    // verbose: errors carry their schema, so a message can list what is allowed.
    const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: false, coerceTypes: false, verbose: true });
    addFormats(ajv);
    for (const wrapper of this.discovery.getProviders({ metadataKey: McpTool.KEY })) {
      const definition = this.discovery.getMetadataByDecorator(McpTool, wrapper) as ToolDefinition;
      const handler = wrapper.instance as McpToolHandler;
      check(definition, handler, this.tools);
      this.tools.set(definition.name, {
        definition,
        handler,
        validate: ajv.compile(closed(definition.input)),
        listed: { plain: JSON.stringify(listing(definition, false)), withProject: JSON.stringify(listing(definition, true)) },
      });
    }
    const missing = TOOL_NAMES.filter((name) => !this.tools.has(name));
    if (missing.length) this.log.warn(`Tools not registered: ${missing.join(', ')}`);
    const unlisted = [...this.tools.keys()].filter((name) => !(TOOL_NAMES as readonly string[]).includes(name));
    if (unlisted.length) this.log.warn(`Tools not in TOOL_NAMES (projects cannot disable them): ${unlisted.join(', ')}`);
  }

  /** The tool as this principal sees it: undefined when it is not in the principal's catalogue. */
  find(principal: Principal, name: string): CatalogueTool | undefined {
    const tool = this.tools.get(name);
    return tool && this.visible(principal, tool.definition) ? tool : undefined;
  }

  /** The JSON of `{"tools":[...]}` for this principal, filtered by scope and by reachable projects. */
  list(principal: Principal): string {
    let listing = this.listings.get(principal);
    if (listing === undefined) {
      const several = principal.projects.size > 1;
      const entries: string[] = [];
      for (const tool of this.tools.values()) {
        if (!this.visible(principal, tool.definition)) continue;
        entries.push(several && tool.definition.projectScoped ? tool.listed.withProject : tool.listed.plain);
      }
      listing = `{"tools":[${entries.join(',')}]}`;
      this.listings.set(principal, listing);
    }
    return listing;
  }

  /** Projects where `principal` may run `definition`: role high enough and the tool not disabled. */
  allowedProjects(principal: Principal, definition: ToolDefinition): ReachableProject[] {
    const allowed: ReachableProject[] = [];
    for (const project of principal.projects.values()) if (permits(project, definition)) allowed.push(project);
    return allowed;
  }

  private visible(principal: Principal, definition: ToolDefinition): boolean {
    if (!principal.scopes.has(definition.scope)) return false;
    for (const project of principal.projects.values()) if (permits(project, definition)) return true;
    return false;
  }
}

export function permits(project: ReachableProject, definition: ToolDefinition): boolean {
  return roleAtLeast(project.role, definition.role) && !project.disabledTools.has(definition.name);
}

function check(definition: ToolDefinition | undefined, handler: McpToolHandler, known: Map<string, CatalogueTool>): asserts definition is ToolDefinition {
  const where = handler?.constructor?.name ?? 'a provider';
  if (!definition?.name) throw new Error(`The MCP tool ${where} has no name.`);
  if (known.has(definition.name)) throw new Error(`Two MCP tools are named "${definition.name}".`);
  if (definition.input?.type !== 'object' || typeof definition.input.properties !== 'object') {
    throw new Error(`The MCP tool "${definition.name}" has no input schema (an object schema with properties).`);
  }
  if ('project_id' in definition.input.properties) throw new Error(`The MCP tool "${definition.name}" declares project_id; project routing adds it.`);
  if (typeof handler?.run !== 'function') throw new Error(`The MCP tool "${definition.name}" has no run() method.`);
}

function annotationsFor(definition: ToolDefinition): ToolAnnotations | undefined {
  if (definition.annotations) return definition.annotations;
  const verb = definition.name.split('_')[0];
  if (verb === 'list' || verb === 'get') return { readOnlyHint: true };
  if (verb === 'delete') return { readOnlyHint: false, destructiveHint: true };
  return { readOnlyHint: false, destructiveHint: false };
}

// ajv-formats is CommonJS with a default export.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** Undeclared arguments are refused unless the tool says otherwise. */
function closed(input: ObjectSchema): ObjectSchema {
  return { additionalProperties: false, ...input };
}

function listing(definition: ToolDefinition, withProject: boolean) {
  const input = closed(definition.input);
  const inputSchema = withProject
    ? {
        ...input,
        properties: { project_id: PROJECT_ID_PROPERTY, ...input.properties },
        required: ['project_id', ...(input.required ?? [])],
      }
    : input;
  const annotations = annotationsFor(definition);
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    inputSchema,
    ...(definition.output ? { outputSchema: definition.output } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

/** Patterns of the tool schemas, said in words. */
const PATTERN_RULES: Record<string, string> = {
  '^[a-z0-9]+(?:-[a-z0-9]+)*$': 'be lower-case letters a-z and digits, words joined by single hyphens (like "my-first-post")',
};

/** Formats of the tool schemas, said in words. */
const FORMAT_RULES: Record<string, string> = {
  'date-time': 'an ISO-8601 date-time with a time zone, such as "2026-01-31T09:00:00Z"',
};

/** A sentence naming the argument and what is allowed, for a model to correct its call. */
export function describeSchemaError(error: ErrorObject | undefined): string {
  if (!error) return 'Invalid arguments.';
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const p = error.params as Record<string, unknown>;
  const name = (path || (p.missingProperty as string) || (p.additionalProperty as string) || 'arguments') as string;
  switch (error.keyword) {
    case 'required':
      return `Missing required argument "${p.missingProperty as string}".`;
    case 'additionalProperties': {
      if (!path) return `Unexpected argument "${p.additionalProperty as string}": this tool does not take it.`;
      const allowed = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `Unknown key "${p.additionalProperty as string}" in "${path}"${allowed.length ? `: allowed keys are ${allowed.join(', ')}` : ''}.`;
    }
    case 'minProperties':
      return `Invalid value for "${name}": give at least ${p.limit as number} ${p.limit === 1 ? 'key' : 'keys'}.`;
    case 'type':
      return `Invalid value for "${name}": expected ${p.type === 'integer' ? 'an integer' : `a ${p.type as string}`}.`;
    case 'enum':
      return `Invalid value for "${name}": must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}.`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `Invalid value for "${name}": must be ${p.comparison as string} ${p.limit as number}.`;
    case 'minLength':
      return p.limit === 1 ? `Invalid value for "${name}": must not be empty.` : `Invalid value for "${name}": must be at least ${p.limit as number} characters long.`;
    case 'maxLength':
      return `Invalid value for "${name}": must be at most ${p.limit as number} characters long.`;
    case 'maxItems':
      return `Invalid value for "${name}": at most ${p.limit as number} items.`;
    case 'minItems':
      return `Invalid value for "${name}": at least ${p.limit as number} items.`;
    case 'pattern':
      return `Invalid value for "${name}": must ${PATTERN_RULES[p.pattern as string] ?? `match ${p.pattern as string}`}.`;
    case 'format':
      return `Invalid value for "${name}": must be ${FORMAT_RULES[p.format as string] ?? `a valid ${p.format as string}`}.`;
    case 'oneOf':
    case 'anyOf':
    case 'not':
      return `Invalid arguments: ${error.message ?? 'they do not match the schema'}${path ? ` (at "${path}")` : ''}.`;
    default:
      return `Invalid value for "${name}": ${error.message ?? 'does not match the schema'}.`;
  }
}
