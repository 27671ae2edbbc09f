import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { TOOL_NAMES } from '../common/tool-names.js';
import { McpTool, type McpToolHandler, type ObjectSchema, type ToolAnnotations, type ToolDefinition } from './mcp-tool.decorator.js';

/** A discovered tool, compiled once at boot. */
export interface CatalogueTool {
  definition: ToolDefinition;
  handler: McpToolHandler;
  validate: ValidateFunction;
  /**
   * `tools/list` entries, serialised once: as declared, and with a required `project_id`; each also
   * as a client that renders MCP Apps views sees it (`_meta.ui`, when the tool has a view).
   */
  listed: Record<'plain' | 'withProject' | 'plainViews' | 'withProjectViews', string>;
}

const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

export const PROJECT_ID_PROPERTY = { type: 'string', description: 'Id of the project to act on; see list_projects' };

/**
 * The tool catalogue: built from the providers marked with {@link McpTool} at boot, checked
 * (unique names, a schema each, every product tool present) and compiled once.
 * What each principal may see and run of it is ToolAccess's.
 */
@Injectable()
export class ToolRegistry implements OnModuleInit {
  private readonly log = new Logger(ToolRegistry.name);
  private readonly tools = new Map<string, CatalogueTool>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    // verbose: errors carry their schema, so a message can list what is allowed.
    const options = { allErrors: false, useDefaults: true, strict: false, coerceTypes: false, verbose: true };
    const ajv = addFormats(new Ajv(options));
    // A schema that names the 2020-12 dialect is compiled (and published) as declared.
    const ajv2020 = addFormats(new Ajv2020(options));
    for (const wrapper of this.discovery.getProviders({ metadataKey: McpTool.KEY })) {
      const definition = this.discovery.getMetadataByDecorator(McpTool, wrapper) as ToolDefinition;
      const handler = wrapper.instance as McpToolHandler;
      check(definition, handler, this.tools);
      this.tools.set(definition.name, {
        definition,
        handler,
        validate: (definition.input.$schema === JSON_SCHEMA_2020_12 ? ajv2020 : ajv).compile(closed(definition.input)),
        listed: {
          plain: JSON.stringify(listing(definition, false, false)),
          withProject: JSON.stringify(listing(definition, true, false)),
          plainViews: JSON.stringify(listing(definition, false, true)),
          withProjectViews: JSON.stringify(listing(definition, true, true)),
        },
      });
    }
    const missing = TOOL_NAMES.filter((name) => !this.tools.has(name));
    if (missing.length) this.log.warn(`Tools not registered: ${missing.join(', ')}`);
    const unlisted = [...this.tools.keys()].filter((name) => !(TOOL_NAMES as readonly string[]).includes(name));
    if (unlisted.length) this.log.warn(`Tools not in TOOL_NAMES (projects cannot disable them): ${unlisted.join(', ')}`);
  }

  get(name: string): CatalogueTool | undefined {
    return this.tools.get(name);
  }

  /**
   * The JSON of `{"tools":[...]}` with the tools `shown` lets through; with `several` projects,
   * project-scoped ones require `project_id`; with `views`, tools name their MCP Apps view.
   */
  list(shown: (definition: ToolDefinition) => boolean, several: boolean, views = false): string {
    const entries: string[] = [];
    for (const tool of this.tools.values()) {
      if (!shown(tool.definition)) continue;
      const withProject = several && tool.definition.projectScoped;
      entries.push(tool.listed[withProject ? (views ? 'withProjectViews' : 'withProject') : views ? 'plainViews' : 'plain']);
    }
    return `{"tools":[${entries.join(',')}]}`;
  }
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

function listing(definition: ToolDefinition, withProject: boolean, views: boolean) {
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
    // MCP Apps: `_meta.ui.resourceUri`, and the older flat key hosts of the first drafts read.
    ...(views && definition.view ? { _meta: { ui: { resourceUri: definition.view }, 'ui/resourceUri': definition.view } } : {}),
  };
}
