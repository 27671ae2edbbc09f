import type { Outcome } from '../activity/activity-entry.entity.js';
import type { Principal } from '../auth/principal.js';
import type { RequestClient } from '../mcp/mcp-request.js';
import type { Era } from '../mcp/protocol-version.js';
import type { SessionInfo } from '../mcp/sessions.service.js';
import type { CallStream } from './call-stream.js';
import type { InputMethod } from './client-capabilities.js';

/**
 * Asking the client for input in the middle of a request, one API for both eras:
 * - legacy (2025-*): each request goes out on the call's event stream as a server→client request
 *   (ClientRequests), one at a time, and the handler waits for the answer;
 * - modern (2026-07-28, SEP-2322 "MRTR"): the answers are looked up in this request's `inputResponses`
 *   and in the answers its verified `requestState` carries; when one is missing the request ends with
 *   `{resultType: "input_required", inputRequests, requestState}` (the {@link InputRequired} signal) and
 *   the handler runs again from the start on the client's retry, finding the earlier answers in the state.
 * A request the client did not declare the capability for is never sent: its answer is null.
 */

export type { InputMethod } from './client-capabilities.js';

/** A primitive property of an elicitation form (MCP `PrimitiveSchemaDefinition`). */
export type ElicitProperty = Record<string, unknown> & { type: 'string' | 'number' | 'integer' | 'boolean' | 'array' };

/** The params of a form-mode `elicitation/create`. */
export interface ElicitParams {
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, ElicitProperty>; required?: string[] };
}

/** What the user did with the form. `content` is only present when they accepted. */
export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** `sampling/createMessage`'s result (`CreateMessageResult`): `role`, `content`, `model`, `stopReason?`. */
export type SampleResult = Record<string, unknown> & { role: string; content: unknown; model: string };

/** `roots/list`'s result. */
export interface RootsResult {
  roots: { uri: string; name?: string }[];
}

/** One question for the client, under a key the server chooses. */
export type InputRequest =
  | { method: 'elicitation/create'; params: ElicitParams }
  | { method: 'sampling/createMessage'; params: Record<string, unknown> }
  | { method: 'roots/list'; params?: Record<string, never> };

type AnswerOf<R> = R extends { method: 'elicitation/create' } ? ElicitResult : R extends { method: 'roots/list' } ? RootsResult : SampleResult;

/** The answers by key; null where this client cannot be asked (capability not declared, no way to reach it). */
export type Answers<R extends Record<string, InputRequest>> = { [K in keyof R]: AnswerOf<R[K]> | null };

export interface AskOptions {
  /** How the activity log records a call that ends asking (modern era), e.g. `setup_required`; `ok` by default. */
  outcome?: Outcome;
}

/** What handlers (tools, prompts) use to ask the client. */
export interface Asker {
  /** Whether a request of `method` can reach this client (the capability declared, and in the legacy era a session and an event stream). */
  canAsk(method: InputMethod): boolean;
  /**
   * The answers to `requests`, by key. Legacy: asked one after the other over the call's stream; timeouts,
   * client errors and cancellation are DomainErrors. Modern: from the retry's `inputResponses` and
   * `requestState`; anything unanswered ends the request with `input_required` (the call does not return).
   * Keys must be stable between runs of the handler: the modern retry finds earlier answers by key.
   */
  ask<const R extends Record<string, InputRequest>>(requests: R, options?: AskOptions): Promise<Answers<R>>;
}

/** The signal a modern-era ask throws: the request ends with this `input_required` result. Not an error. */
export class InputRequired {
  constructor(
    readonly inputRequests: Record<string, InputRequest>,
    readonly requestState: string,
    readonly outcome: Outcome,
  ) {}

  get result(): Record<string, unknown> {
    return { resultType: 'input_required', inputRequests: this.inputRequests, requestState: this.requestState };
  }
}

/** The request a handler runs in, as the asker needs it. */
export interface AskInput {
  principal: Principal;
  era: Era;
  client: RequestClient;
  /** Legacy: the session, stream and signal ClientRequests sends on. */
  session: SessionInfo | null;
  stream: CallStream;
  signal: AbortSignal;
  requestKey?: string;
  /** Modern: the request (method, name, arguments) its state is bound to. */
  method: 'tools/call' | 'prompts/get' | 'resources/read';
  name: string;
  args?: unknown;
  /** Modern: the request's params, where `inputResponses` and `requestState` are. */
  params: unknown;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An elicitation form's values checked against its schema: required ones present, each declared one of its type. */
function fitsForm(content: Record<string, unknown>, schema: ElicitParams['requestedSchema']): boolean {
  for (const key of schema.required ?? []) if (content[key] === undefined) return false;
  for (const [key, value] of Object.entries(content)) {
    const property = schema.properties[key];
    if (!property) continue;
    const ok =
      property.type === 'string'
        ? typeof value === 'string'
        : property.type === 'boolean'
          ? typeof value === 'boolean'
          : property.type === 'integer'
            ? Number.isInteger(value)
            : property.type === 'number'
              ? typeof value === 'number' && Number.isFinite(value)
              : Array.isArray(value) && value.every((v) => typeof v === 'string');
    if (!ok) return false;
    if (Array.isArray(property.enum) && !(property.enum as unknown[]).includes(value)) return false;
  }
  return true;
}

/**
 * The answer to `request` if `value` is a valid one (MCP ElicitResult, CreateMessageResult or
 * ListRootsResult), else undefined: not answered, asked again.
 */
export function validAnswer(request: InputRequest, value: unknown): ElicitResult | SampleResult | RootsResult | undefined {
  if (!isObject(value)) return undefined;
  switch (request.method) {
    case 'elicitation/create': {
      const { action, content } = value;
      if (action === 'decline' || action === 'cancel') return { action };
      if (action !== 'accept' || !isObject(content) || !fitsForm(content, request.params.requestedSchema)) return undefined;
      // Only the fields the form asked for.
      const kept = Object.fromEntries(Object.entries(content).filter(([key]) => key in request.params.requestedSchema.properties));
      return { action, content: kept };
    }
    case 'sampling/createMessage': {
      const { role, content, model } = value;
      if (typeof role !== 'string' || typeof model !== 'string' || !(isObject(content) || Array.isArray(content))) return undefined;
      return value as SampleResult;
    }
    case 'roots/list': {
      const { roots } = value;
      if (!Array.isArray(roots) || !roots.every((r) => isObject(r) && typeof r.uri === 'string')) return undefined;
      return { roots: roots.map((r: Record<string, unknown>) => ({ uri: r.uri as string, ...(typeof r.name === 'string' ? { name: r.name } : {}) })) };
    }
  }
}
