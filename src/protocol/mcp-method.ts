import { DiscoveryService } from '@nestjs/core';
import type { Principal } from '../auth/principal.js';
import type { RequestClient } from '../mcp/mcp-request.js';
import type { Era } from '../mcp/protocol-version.js';
import type { SessionInfo } from '../mcp/sessions.service.js';
import type { CallStream } from './call-stream.js';
import type { AskInput, Asker } from './input.js';
import type { RequestId } from './json-rpc.js';
import type { MethodResult } from './method-result.js';

/** A notification from the client (no answer but 202). */
export interface NotificationCall {
  principal: Principal;
  /** The session it was sent in; null for a stateless client. */
  session: SessionInfo | null;
  params: unknown;
}

/** A JSON-RPC request from the client, as a method receives it. */
export interface MethodCall extends NotificationCall {
  id: RequestId;
  /** The era the request speaks, decided once per request by the transport (docs/protocol.md#protocol-revisions). */
  era: Era;
  /** Its client's capabilities, identity and log level, from the session or `_meta`. */
  client: RequestClient;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** The request's answer: notifications and server→client requests before the response go out on it. */
  stream: CallStream;
}

/** A method's handler: what a provider's decorated method is called as. */
export type MethodHandler = (call: MethodCall) => Promise<MethodResult> | MethodResult;

/** Where a method is served, and what serving it advertises. */
export interface McpMethodOptions {
  /** The eras whose table has the method; both by default. */
  eras?: readonly Era[];
  /**
   * What `server/discover` (2026-07-28) advertises when the modern table has the method, merged with
   * the other methods' (e.g. `{ prompts: {} }`, or `{ extensions: { "io.modelcontextprotocol/tasks": {} } }`).
   */
  advertises?: Record<string, object>;
}

/** One registration, as the transport reads it at boot. */
export interface MethodRegistration {
  name: string;
  eras: readonly Era[];
  advertises?: Record<string, object>;
}

const Registration = DiscoveryService.createDecorator<MethodRegistration>();

/**
 * Marks a provider's method as the handler of the JSON-RPC method `name` of /mcp: the transport finds
 * every one at boot (`McpMethods`), builds one table per era once, and refuses the boot when two
 * handlers claim a method in the same era. The feature that owns a method declares it in its own
 * folder; the transport imports no feature.
 */
export function McpMethod(name: string, options: McpMethodOptions = {}): MethodDecorator {
  return Registration({ name, eras: options.eras ?? ['legacy', 'modern'], ...(options.advertises ? { advertises: options.advertises } : {}) });
}
McpMethod.KEY = Registration.KEY;

/*
 * The ports the transport offers its features (provided by McpModule, global): features inject these
 * abstract classes and never the transport's own services.
 */

/** Makes the {@link Asker} of one request, in its era (the transport's InputRequests). */
export abstract class ClientAsking {
  abstract forCall(input: AskInput): Asker;
}

/** The sessions' GET streams this instance holds (the transport's SessionStreams). */
export abstract class SessionOutbox {
  /** The sessions whose stream this instance holds. */
  abstract sessionIds(): string[];
  /** Who holds the session's stream here, as of now: undefined when this instance holds none, null when its credential is no longer valid. */
  abstract principal(sessionId: string): Promise<Principal | null | undefined>;
  /** Ends the session's stream held here, if any. */
  abstract close(sessionId: string): void;
  /** Writes one JSON-RPC message on the session's stream if this instance holds it; answers whether it did. */
  abstract send(sessionId: string, message: object): boolean;
}

/** A `tools/call` as the transport runs it, wherever it comes from (a request, a task's run). */
export interface ToolCallInput {
  principal: Principal;
  /** The session the call was sent in; null for a stateless client (which cannot be asked anything). */
  session: SessionInfo | null;
  /** The era the call speaks, and its client (capabilities, identity, log level). */
  era: Era;
  client: RequestClient;
  params: unknown;
  signal: AbortSignal;
  /** The call's answer: progress, log messages and requests to the client go out on it. */
  stream: CallStream;
  requestKey?: string;
  /** The call becomes a task if the tool calls `ctx.detach()`: it throws {@link DetachToTask}. */
  detachable?: boolean;
}

/** A tool asked to run the rest of its call as a task (ToolContext.detach in a detachable call). Not an error. */
export class DetachToTask {}

/** Runs one tool call: find, route, guard, validate, run, shape (the transport's ToolDispatcher). */
export abstract class ToolCalls {
  abstract call(input: ToolCallInput): Promise<MethodResult>;
}

/**
 * A `tools/call` that runs as a task (the tasks extension of 2026-07-28): a provider of this class,
 * found at boot, is what the transport's `tools/call` hands such a call to. Without one, no call runs
 * as a task.
 */
export abstract class ToolTasks {
  /** Whether the request declared the extension. */
  abstract declared(client: RequestClient): boolean;
  /** Starts the call of `tool` as a task and answers its creation. */
  abstract start(call: MethodCall, tool: string): Promise<MethodResult>;
}
