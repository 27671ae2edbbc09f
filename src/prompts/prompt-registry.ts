import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { McpPrompt, type McpPromptHandler, type PromptDefinition } from './mcp-prompt.decorator.js';

/** A discovered prompt: its definition, its handler and its `prompts/list` entry, serialised once. */
export interface CataloguePrompt {
  definition: PromptDefinition;
  handler: McpPromptHandler;
  listed: string;
}

const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The prompts: providers marked with {@link McpPrompt}, found at boot and checked (unique names,
 * unique argument names, a get() each). Who may see which is PromptsService's.
 */
@Injectable()
export class PromptRegistry implements OnModuleInit {
  private readonly prompts = new Map<string, CataloguePrompt>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: McpPrompt.KEY })) {
      const definition = this.discovery.getMetadataByDecorator(McpPrompt, wrapper);
      const handler = wrapper.instance as McpPromptHandler;
      check(definition, handler, this.prompts);
      this.prompts.set(definition.name, { definition, handler, listed: JSON.stringify(listing(definition)) });
    }
  }

  get(name: string): CataloguePrompt | undefined {
    return this.prompts.get(name);
  }

  all(): IterableIterator<CataloguePrompt> {
    return this.prompts.values();
  }
}

function check(
  definition: PromptDefinition | undefined,
  handler: McpPromptHandler,
  known: Map<string, CataloguePrompt>,
): asserts definition is PromptDefinition {
  const where = handler?.constructor?.name ?? 'a provider';
  if (!definition?.name || !NAME.test(definition.name))
    throw new Error(`The MCP prompt ${where} has no valid name (lower-case letters, digits and underscores).`);
  if (known.has(definition.name)) throw new Error(`Two MCP prompts are named "${definition.name}".`);
  const names = definition.arguments.map((a) => a.name);
  if (new Set(names).size !== names.length) throw new Error(`The MCP prompt "${definition.name}" declares an argument twice.`);
  if (typeof handler?.get !== 'function') throw new Error(`The MCP prompt "${definition.name}" has no get() method.`);
}

function listing(definition: PromptDefinition) {
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    arguments: definition.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required === true })),
  };
}
