import { DiscoveryService } from '@nestjs/core';
import type { Principal, ReachableProject } from '../auth/principal.js';
import type { Asker } from '../protocol/input.js';

/** The product's completers, by the kind of value they propose (see CompletionsService). */
export type CompleterName = 'project_id' | 'article_id' | 'handle' | 'tag' | 'tone';

/** One argument of a prompt, as `prompts/list` publishes it, and how `completion/complete` proposes values for it. */
export interface PromptArgument {
  name: string;
  description: string;
  required?: boolean;
  /** At most this many characters (default 2,000): a longer value is -32602. */
  maxLength?: number;
  /**
   * Values for `completion/complete`: a product completer (tenancy applied there), or fixed
   * candidates filtered by prefix. Without it the argument completes to nothing.
   */
  complete?: CompleterName | readonly string[];
}

/** Everything `prompts/list` publishes and `prompts/get` enforces about one prompt. */
export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: readonly PromptArgument[];
  /**
   * Tool names: the prompt is listed (and can be got) when ANY of them is in the caller's
   * catalogue. Empty: always listed (fixtures only; product prompts lead to a tool).
   */
  needs: readonly string[];
}

/** What a prompt's get() receives besides its arguments. */
export interface PromptContext {
  principal: Principal;
  /** Projects where the caller may run `tool` (its catalogue and the project's rules); empty when it is not in the catalogue. */
  allowedProjects(tool: string): ReachableProject[];
  /** Whether {@link ask} can reach this client with a method (see Asker). */
  canAsk: Asker['canAsk'];
  /**
   * Asks the client, answers by key (see Asker): in the 2026-07-28 era an unanswered question ends
   * prompts/get with `input_required` and get() runs again on the retry.
   */
  ask: Asker['ask'];
}

/** An MCP content block of a prompt message. */
export type PromptContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string } };

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: PromptContent;
}

/** What `prompts/get` answers. */
export interface PromptResult {
  description?: string;
  messages: PromptMessage[];
}

/** A prompt provider: its arguments (checked: declared, strings, required ones present) to messages. */
export interface McpPromptHandler {
  get(args: Readonly<Record<string, string>>, ctx: PromptContext): Promise<PromptResult> | PromptResult;
}

/** Marks a provider as an MCP prompt; the prompt registry discovers it at boot (by `McpPrompt.KEY`). */
export const McpPrompt = DiscoveryService.createDecorator<PromptDefinition>();
