import { Injectable } from '@nestjs/common';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { RpcError } from '../protocol/json-rpc.js';
import type { CompleterName, PromptArgument } from '../prompts/mcp-prompt.decorator.js';
import { PromptsService } from '../prompts/prompts.service.js';
import { ReadableArticles } from '../prompts/readable-articles.js';
import { TONES } from '../prompts/tones.js';
import { TEMPLATE_VARIABLES } from '../resources/resource-uris.js';
import { CompletionsRepository, type Matches, type SearchKind } from './completions.repository.js';

/** Values in one answer (MCP: at most 100). */
export const MAX_VALUES = 100;
/** Matches counted for `total`; past this many `total` is left out (hasMore says there are more). */
export const COUNT_CAP = 10_000;
/** Longest value accepted to complete: longer than any handle, tag or id. */
const MAX_VALUE_LENGTH = 500;

export interface CompleteResult {
  completion: { values: string[]; total?: number; hasMore: boolean };
}

/** A variable of a resource template, or a prompt argument, and how it completes. */
type Completer = CompleterName | 'media_id' | readonly string[] | undefined;

const NOT_AN_OBJECT = (what: string) => RpcError.invalidParams(`Invalid params: "${what}" must be an object.`);

/**
 * `completion/complete` for the arguments of prompts and the variables of the product's resource
 * templates. Values come from the caller's readable data only (ReadableArticles), narrowed to the
 * project of `context.arguments.project_id` when one is given, by indexed prefix search.
 */
@Injectable()
export class CompletionsService {
  constructor(
    private readonly prompts: PromptsService,
    private readonly readable: ReadableArticles,
    private readonly repository: CompletionsRepository,
  ) {}

  async complete(principal: Principal, params: unknown): Promise<CompleteResult> {
    if (!isObject(params)) throw RpcError.invalidParams('Invalid params: expected an object with "ref" and "argument".');
    const { ref, argument, context } = params as { ref?: unknown; argument?: unknown; context?: unknown };
    if (!isObject(ref)) throw NOT_AN_OBJECT('ref');
    if (!isObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
      throw RpcError.invalidParams('Invalid params: "argument" must be an object with a string "name" and a string "value".');
    }
    const { name, value } = argument as { name: string; value: string };
    if (value.length > MAX_VALUE_LENGTH) throw RpcError.invalidParams(`Invalid params: "argument.value" must be at most ${MAX_VALUE_LENGTH} characters.`);
    const given = contextArguments(context);

    let projects = this.readable.projects(principal);
    let completer: Completer;
    if (ref.type === 'ref/prompt') {
      if (typeof ref.name !== 'string') throw RpcError.invalidParams('Invalid params: "ref.name" must be the name of a prompt (a string).');
      const prompt = this.prompts.find(principal, ref.name);
      if (!prompt) throw RpcError.invalidParams(`Unknown prompt: ${ref.name}`);
      const declared: PromptArgument | undefined = prompt.definition.arguments.find((a) => a.name === name);
      if (!declared) throw RpcError.invalidParams(`Prompt ${ref.name} has no argument "${name}".`);
      completer = declared.complete;
      // Only projects where the prompt leads somewhere (any of the tools it needs runs there).
      const { needs } = prompt.definition;
      if (needs.length) {
        const leads = new Set(needs.flatMap((tool) => this.readable.allowedProjects(principal, tool).map((p) => p.id)));
        projects = projects.filter((p) => leads.has(p.id));
      }
    } else if (ref.type === 'ref/resource') {
      if (typeof ref.uri !== 'string') throw RpcError.invalidParams('Invalid params: "ref.uri" must be a resource template URI (a string).');
      const variables = TEMPLATE_VARIABLES[ref.uri];
      if (!variables) throw RpcError.invalidParams(`Unknown resource template: ${ref.uri}`);
      if (!variables.includes(name)) throw RpcError.invalidParams(`Resource template ${ref.uri} has no variable "${name}".`);
      completer = name as Completer;
    } else {
      throw RpcError.invalidParams('Invalid params: "ref.type" must be "ref/prompt" or "ref/resource".');
    }

    // Nothing starts with a NUL (and PostgreSQL takes none in text).
    if (completer === undefined || value.includes('\u0000')) return answer({ values: [], hasMore: false }, 0);
    if (typeof completer !== 'string') return fixed(completer, value);
    if (completer === 'tone') return fixed(TONES, value);
    if (completer === 'project_id') return this.projectIds(projects, value);
    // Narrowed to the project already chosen; one the caller cannot read narrows to nothing.
    if (given.project_id !== undefined) projects = projects.filter((p) => p.id === given.project_id);
    return this.search(completer, principal, projects, value);
  }

  private projectIds(projects: ReachableProject[], value: string): CompleteResult {
    const prefix = value.toLowerCase();
    const matching = projects
      .filter((p) => p.id.startsWith(prefix) || p.name.toLowerCase().startsWith(prefix))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
      .map((p) => p.id);
    return answer({ values: matching.slice(0, MAX_VALUES), hasMore: matching.length > MAX_VALUES }, matching.length);
  }

  private async search(kind: SearchKind, principal: Principal, projects: ReachableProject[], value: string): Promise<CompleteResult> {
    if (projects.length === 0) return answer({ values: [], hasMore: false }, 0);
    const scope = { accountId: principal.accountId, projectIds: projects.map((p) => p.id) };
    const matches = await this.repository.search(kind, scope, value, MAX_VALUES);
    if (!matches.hasMore) return answer(matches, matches.values.length);
    const total = await this.repository.count(kind, scope, value, COUNT_CAP + 1);
    return answer(matches, total > COUNT_CAP ? undefined : total);
  }
}

function fixed(candidates: readonly string[], value: string): CompleteResult {
  const prefix = value.toLowerCase();
  const matching = candidates.filter((c) => c.toLowerCase().startsWith(prefix));
  return answer({ values: matching.slice(0, MAX_VALUES), hasMore: matching.length > MAX_VALUES }, matching.length);
}

function answer(matches: Matches, total: number | undefined): CompleteResult {
  return { completion: { values: matches.values, ...(total === undefined ? {} : { total }), hasMore: matches.hasMore } };
}

/** `context.arguments`: the values of the other arguments already given (strings; anything else is refused). */
function contextArguments(context: unknown): Record<string, string> {
  if (context === undefined || context === null) return {};
  if (!isObject(context)) throw NOT_AN_OBJECT('context');
  const args = context.arguments;
  if (args === undefined || args === null) return {};
  if (!isObject(args)) throw NOT_AN_OBJECT('context.arguments');
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(args)) {
    if (typeof v !== 'string') throw RpcError.invalidParams(`Invalid params: "context.arguments.${key}" must be a string.`);
    if (key === 'project_id') out.project_id = v;
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
