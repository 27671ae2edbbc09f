import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { declares, type InputMethod } from '../protocol/client-capabilities.js';
import { ClientRequests, type AskingCall } from './client-requests.service.js';
import { RpcError } from '../protocol/json-rpc.js';
import { signState, verifyState, type StateBinding } from './request-state.js';
import type { ClientAsking } from '../protocol/mcp-method.js';
import {
  isObject,
  InputRequired,
  validAnswer,
  type Answers,
  type AskInput,
  type AskOptions,
  type Asker,
  type ElicitResult,
  type InputRequest,
} from '../protocol/input.js';

// How a request asks its client, in either era, and the shapes of the questions: src/protocol/input.ts.

/** The client's answer to a legacy `elicitation/create`, checked: an action, and with `accept` an object of values. */
export function elicitResult(result: Record<string, unknown> | null): ElicitResult | null {
  if (result === null) return null;
  const { action, content } = result;
  const validContent = content === undefined || isObject(content);
  if ((action !== 'accept' && action !== 'decline' && action !== 'cancel') || !validContent) {
    throw new DomainError(
      'unavailable',
      'The client answered elicitation/create with something other than an action (accept, decline or cancel) and its content; nothing was done.',
    );
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
export class InputRequests implements OnModuleInit, ClientAsking {
  private readonly log = new Logger(InputRequests.name);

  constructor(
    private readonly clientRequests: ClientRequests,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (this.config.requestStateSecretGenerated && !generatedSecretWarned) {
      generatedSecretWarned = true;
      this.log.warn(
        'REQUEST_STATE_SECRET is not set: this process signs requestState with a secret of its own, so a 2026-07-28 retry that reaches another instance is refused. Set the same REQUEST_STATE_SECRET on every instance.',
      );
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
    const asking: AskingCall = {
      principal: input.principal,
      session: input.session,
      era: input.era,
      client: input.client,
      stream: input.stream,
      signal: input.signal,
      requestKey: input.requestKey,
    };
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
