import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';
import type { Asker } from '../protocol/input.js';
import { RpcError } from '../protocol/json-rpc.js';
import { ToolAccess } from '../protocol/tool-access.js';
import type { PromptContext, PromptDefinition, PromptResult } from './mcp-prompt.decorator.js';
import { PromptRegistry, type CataloguePrompt } from './prompt-registry.js';
import { ReadableArticles } from './readable-articles.js';

const DEFAULT_MAX_LENGTH = 2_000;

/** A request that cannot ask the client anything: every answer is null. */
const NO_ASKING: Asker = {
  canAsk: () => false,
  ask: (requests) => Promise.resolve(Object.fromEntries(Object.keys(requests).map((key) => [key, null])) as never),
};

/**
 * `prompts/list` and `prompts/get`, filtered per credential like the tool catalogue: a prompt is
 * there for a caller when any tool it leads to is in the caller's catalogue. A prompt that is not
 * there does not exist for that caller (`Unknown prompt`, like `Unknown tool`).
 */
@Injectable()
export class PromptsService {
  constructor(
    private readonly registry: PromptRegistry,
    private readonly access: ToolAccess,
    private readonly readable: ReadableArticles,
  ) {}

  /** The prompt as `principal` sees it: undefined when it is not listed to it. */
  find(principal: Principal, name: string): CataloguePrompt | undefined {
    const prompt = this.registry.get(name);
    return prompt && this.visible(principal, prompt.definition) ? prompt : undefined;
  }

  /** The JSON of `{"prompts":[...]}` for `principal`. */
  list(principal: Principal): string {
    const entries: string[] = [];
    for (const prompt of this.registry.all()) if (this.visible(principal, prompt.definition)) entries.push(prompt.listed);
    return `{"prompts":[${entries.join(',')}]}`;
  }

  /**
   * `prompts/get`. `asker` makes the request's way to ask the client (PromptMethods: ClientAsking), given
   * the prompt and its arguments; without it the prompt cannot ask anything.
   */
  async get(principal: Principal, params: unknown, asker: (name: string, args: unknown) => Asker = () => NO_ASKING): Promise<PromptResult> {
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw RpcError.invalidParams('Invalid params: expected an object with "name" and "arguments".');
    const { name, arguments: raw } = params as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') throw RpcError.invalidParams('Invalid params: "name" must be the name of a prompt (a string).');
    const prompt = this.find(principal, name);
    if (!prompt) throw RpcError.invalidParams(`Unknown prompt: ${name}`);
    const args = checkArguments(prompt.definition, raw);
    const { canAsk, ask } = asker(name, raw);
    const ctx: PromptContext = { principal, allowedProjects: (tool) => this.readable.allowedProjects(principal, tool), canAsk, ask };
    return prompt.handler.get(args, ctx);
  }

  private visible(principal: Principal, definition: PromptDefinition): boolean {
    return definition.needs.length === 0 || definition.needs.some((tool) => this.access.find(principal, tool) !== undefined);
  }
}

/**
 * The arguments of `prompts/get` as the prompt declares them: an object of strings, nothing
 * undeclared, every required one present and not blank. An optional one given as "" is left out
 * (clients send empty fields for what the user did not fill in).
 */
export function checkArguments(definition: PromptDefinition, raw: unknown): Record<string, string> {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw RpcError.invalidParams('Invalid params: "arguments" must be an object whose values are strings.');
  }
  const given = (raw ?? {}) as Record<string, unknown>;
  const declared = new Map(definition.arguments.map((a) => [a.name, a]));
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(given)) {
    const argument = declared.get(key);
    if (!argument) {
      const takes = definition.arguments.length ? `it takes ${definition.arguments.map((a) => a.name).join(', ')}` : 'it takes no arguments';
      throw RpcError.invalidParams(`Unexpected argument "${key}" for prompt ${definition.name}: ${takes}.`);
    }
    if (typeof value !== 'string') throw RpcError.invalidParams(`Invalid value for "${key}": expected a string.`);
    const max = argument.maxLength ?? DEFAULT_MAX_LENGTH;
    if (value.length > max) throw RpcError.invalidParams(`Invalid value for "${key}": at most ${max} characters.`);
    if (value.trim() !== '') args[key] = value;
  }
  for (const argument of definition.arguments) {
    if (argument.required && args[argument.name] === undefined) {
      throw RpcError.invalidParams(`Missing required argument "${argument.name}" for prompt ${definition.name}: ${argument.description}`);
    }
  }
  return args;
}
