import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Outcome } from '../activity/activity-entry.entity.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { CallStream } from './call-stream.js';
import { declares, type InputMethod } from './client-capabilities.js';
import { ClientRequests, type AskingCall } from './client-requests.service.js';
import { RpcError } from './json-rpc.js';
import type { RequestClient } from './mcp-request.js';
import type { Era } from './protocol-version.js';
import { signState, verifyState, type StateBinding } from './request-state.js';
import type { SessionInfo } from './sessions.service.js';

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

function isObject(value: unknown): value is Record<string, unknown> {
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

/** The client's answer to a legacy `elicitation/create`, checked: an action, and with `accept` an object of values. */
export function elicitResult(result: Record<string, unknown> | null): ElicitResult | null {
  if (result === null) return null;
  const { action, content } = result;
  const validContent = content === undefined || isObject(content);
  if ((action !== 'accept' && action !== 'decline' && action !== 'cancel') || !validContent) {
    throw new DomainError('unavailable', 'The client answered elicitation/create with something other than an action (accept, decline or cancel) and its content; nothing was done.');
  }
  return action === 'accept' ? { action, content: (content ?? {}) as Record<string, unknown> } : { action };
}

/** The answers a state carries between rounds. */
interface CarriedState {
  answers: Record<string, unknown>;
}

/** Whether this process has said that REQUEST_STATE_SECRET is unset: once per process, not once per app in it. */
let generatedSecretWarned = false;

/** Makes the {@link Asker} of a request, in its era. */
@Injectable()
export class InputRequests implements OnModuleInit {
  private readonly log = new Logger(InputRequests.name);

  constructor(
    private readonly clientRequests: ClientRequests,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (this.config.requestStateSecretGenerated && !generatedSecretWarned) {
      generatedSecretWarned = true;
      this.log.warn('REQUEST_STATE_SECRET is not set: this process signs requestState with a secret of its own, so a 2026-07-28 retry that reaches another instance is refused. Set the same REQUEST_STATE_SECRET on every instance.');
    }
  }

  /**
   * The asker of one request. In the modern era its `inputResponses` and `requestState` are checked
   * first: not an object, or a state that fails verification, is a -32602 RpcError (thrown here, before
   * the handler runs).
   */
  forCall(input: AskInput): Asker {
    return input.era === 'modern' ? this.modern(input) : this.legacy(input);
  }

  private legacy(input: AskInput): Asker {
    const asking: AskingCall = { principal: input.principal, session: input.session, era: input.era, client: input.client, stream: input.stream, signal: input.signal, requestKey: input.requestKey };
    const canAsk = (method: InputMethod) => this.clientRequests.canAsk(asking, method);
    return {
      canAsk,
      ask: async <const R extends Record<string, InputRequest>>(requests: R) => {
        const answers: Record<string, unknown> = {};
        for (const [key, request] of Object.entries(requests)) {
          const result = await this.clientRequests.ask(asking, request.method, { ...(request.params ?? {}) });
          answers[key] = request.method === 'elicitation/create' ? elicitResult(result) : result;
        }
        return answers as Answers<R>;
      },
    };
  }

  private modern(input: AskInput): Asker {
    const { params } = input;
    const { inputResponses, requestState } = (isObject(params) ? params : {}) as { inputResponses?: unknown; requestState?: unknown };
    if (inputResponses !== undefined && !isObject(inputResponses)) {
      throw RpcError.invalidParams('Invalid params: "inputResponses" must be an object of answers by the keys of inputRequests.');
    }
    const binding: StateBinding = { credentialId: input.principal.credential.id, method: input.method, name: input.name, args: input.args };
    const secret = this.config.requestStateSecret;
    // Answers carried from earlier rounds, by key.
    const known = new Map<string, unknown>();
    if (requestState !== undefined) {
      const carried = verifyState(secret, requestState, binding) as CarriedState;
      if (isObject(carried) && isObject(carried.answers)) for (const [key, value] of Object.entries(carried.answers)) known.set(key, value);
    }
    const responses = (inputResponses ?? {}) as Record<string, unknown>;
    const canAsk = (method: InputMethod) => declares(input.client.capabilities, method);
    return {
      canAsk,
      ask: async <const R extends Record<string, InputRequest>>(requests: R, options?: AskOptions) => {
        const answers: Record<string, unknown> = {};
        const missing: Record<string, InputRequest> = {};
        for (const [key, request] of Object.entries(requests)) {
          if (!canAsk(request.method)) {
            answers[key] = null;
            continue;
          }
          const answer = known.get(key) ?? (Object.hasOwn(responses, key) ? validAnswer(request, responses[key]) : undefined);
          if (answer === undefined) {
            missing[key] = request.method === 'roots/list' ? { method: 'roots/list', params: {} } : request;
            continue;
          }
          known.set(key, answer);
          answers[key] = answer;
        }
        if (Object.keys(missing).length > 0) {
          const state: CarriedState = { answers: Object.fromEntries(known) };
          throw new InputRequired(missing, signState(secret, binding, state), options?.outcome ?? 'ok');
        }
        return answers as Answers<R>;
      },
    };
  }
}
