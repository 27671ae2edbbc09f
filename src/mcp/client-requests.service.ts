import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { CACHE_CHANNEL, DatabaseNotifications } from '../database/notifications.service.js';
import { declares } from '../protocol/client-capabilities.js';
import type { CallStream } from '../protocol/call-stream.js';
import type { RequestClient } from './mcp-request.js';
import type { Era } from './protocol-version.js';
import type { RequestId } from '../protocol/json-rpc.js';
import { CLIENT_REQUESTS_CHANNEL, ClientRequestsRepository, type ClientRequestRow } from './client-requests.repository.js';
import { RequestCancellation } from '../protocol/request-cancellation.js';
import type { SessionInfo } from './sessions.service.js';

/** The call a server→client request is made from. */
export interface AskingCall {
  principal: Principal;
  /** Requests need a session: the client's answer is matched to it. */
  session: SessionInfo | null;
  /** Only the legacy era sends requests on the call's stream (2026-07-28 answers input_required instead). */
  era: Era;
  /** What the client declared it takes. */
  client: RequestClient;
  /** The call's answer, where the request goes out. */
  stream: CallStream;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** Names the tools/call across instances, so its notifications/cancelled stops the wait. */
  requestKey?: string;
}

export type ClientMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/** A waiter that finds nothing new looks again this often (a missed notification, a dropped LISTEN connection). */
const POLL_MS = 5_000;
/** Rows expired longer than this are purged (their waiter's instance died). */
const PURGE_GRACE_S = 60;
const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 500;

/**
 * Server→client requests (`elicitation/create`, `sampling/createMessage`) made during a call. The
 * request goes out on the call's event stream with an id made here; the client answers with a later
 * POST, which may reach any instance: that instance records the answer in Postgres
 * (`mcp_client_requests`) and notifies CLIENT_REQUESTS_CHANNEL, which wakes the waiting instance.
 * The wait ends with the answer, at the timeout (CLIENT_REQUEST_TIMEOUT_MS; the client is then told
 * with `notifications/cancelled`), when the client disconnects, or when it cancels the call.
 */
@Injectable()
export class ClientRequests implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(ClientRequests.name);
  /** Waiters on this instance, by request id: each is woken to read its row again. */
  private readonly waiters = new Map<string, { sessionId: string; wake: () => void }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly requests: ClientRequestsRepository,
    private readonly notifications: DatabaseNotifications,
    private readonly cancellation: RequestCancellation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.notifications.subscribe(CLIENT_REQUESTS_CHANNEL, (id) => this.waiters.get(id)?.wake());
    // A session ended on any instance: its waiters stop (a changed log level wakes them too, harmlessly).
    this.notifications.subscribe(CACHE_CHANNEL, (payload) => {
      if (!payload.startsWith('session:')) return;
      const sessionId = payload.slice('session:'.length);
      for (const waiter of this.waiters.values()) if (waiter.sessionId === sessionId) waiter.wake();
    });
    // Notifications sent while the LISTEN connection was down are lost: every waiter reads its row again.
    this.notifications.onReconnect(() => {
      for (const waiter of this.waiters.values()) waiter.wake();
    });
    this.cancellation.register(async (principal, requestKey) => {
      await this.requests.cancelByRequest(requestKey, principal.credential.id);
    });
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      this.requests
        .purge(PURGE_GRACE_S, PURGE_BATCH)
        .catch((err: Error) => this.log.warn(`Could not purge expired client requests: ${err.message}`))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, PURGE_EVERY_MS).unref();
        });
    };
    this.timer = setTimeout(tick, PURGE_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Whether `method` can be sent to this call's client: a session, the capability declared, and an event stream accepted. */
  canAsk(call: AskingCall, method: ClientMethod): boolean {
    if (call.era !== 'legacy' || !call.session || !call.stream.writable || call.signal.aborted) return false;
    return declares(call.client.capabilities, method);
  }

  /**
   * Sends the request and waits for the client's `result`; null when this client cannot be asked.
   * A JSON-RPC error from the client, the timeout, a disconnect or the call's cancellation are DomainErrors.
   */
  async ask(call: AskingCall, method: ClientMethod, params: Record<string, unknown>): Promise<Record<string, unknown> | null> {
    if (!this.canAsk(call, method)) return null;
    const id = `srv-${randomBytes(18).toString('base64url')}`;
    const timeoutMs = this.config.clientRequestTimeoutMs;
    await this.requests.insert({
      id,
      sessionId: call.session!.id,
      credentialId: call.principal.credential.id,
      requestKey: call.requestKey ?? null,
      method,
      timeoutMs,
    });
    try {
      if (!call.stream.send({ jsonrpc: '2.0', id, method, params })) return null;
      const response = await this.wait(id, call.session!.id, timeoutMs, call.signal, () => call.stream.keepAlive());
      if (response === 'timeout') {
        call.stream.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: `No answer within ${timeoutMs / 1000} s.` } });
        throw new DomainError(
          'timeout',
          `The client did not answer ${method} within ${timeoutMs / 1000} s; nothing was done. Call the tool again when the user is there to answer.`,
        );
      }
      if (response === 'cancelled')
        throw new DomainError(
          'invalid_state',
          `The call was cancelled, or its session ended, while waiting for the client's answer to ${method}; nothing was done.`,
        );
      if (response.error !== undefined || response.result === null || typeof response.result !== 'object' || Array.isArray(response.result)) {
        const message = typeof response.error?.message === 'string' ? response.error.message.slice(0, 500) : 'no result';
        throw new DomainError('unavailable', `The client answered ${method} with an error (${message}); nothing was done.`);
      }
      return response.result as Record<string, unknown>;
    } finally {
      await this.requests.delete(id).catch((err: Error) => this.log.warn(`Could not delete client request ${id}: ${err.message}`));
    }
  }

  /**
   * A JSON-RPC response POSTed by a client: recorded when it answers a pending request of this session
   * and credential; anything else (no session, unknown or foreign id, late) changes nothing.
   */
  async answer(principal: Principal, session: SessionInfo | null, message: { id?: RequestId; result?: unknown; error?: unknown }): Promise<void> {
    if (!session || typeof message.id !== 'string' || !message.id.startsWith('srv-')) return;
    const response = 'error' in message ? { error: message.error } : { result: message.result };
    const recorded = await this.requests.answer(message.id, session.id, principal.credential.id, response);
    if (!recorded) this.log.debug(`Response to ${message.id} ignored: no pending request of this session and credential`);
  }

  private async wait(
    id: string,
    sessionId: string,
    timeoutMs: number,
    signal: AbortSignal,
    idle: () => void,
  ): Promise<NonNullable<ClientRequestRow['response']> | 'timeout' | 'cancelled'> {
    const deadline = Date.now() + timeoutMs;
    let woken = false;
    let wake: () => void = () => undefined;
    this.waiters.set(id, {
      sessionId,
      wake: () => {
        woken = true;
        wake();
      },
    });
    const onAbort = () => wake();
    signal.addEventListener('abort', onAbort);
    try {
      for (;;) {
        woken = false;
        const found = await this.requests.find(id);
        // Gone: the session was purged (its requests went with it).
        if (!found || found.cancelled || signal.aborted) return 'cancelled';
        if (found.response) return found.response;
        const left = deadline - Date.now();
        if (left <= 0) return 'timeout';
        if (woken) continue;
        idle();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, POLL_MS));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      this.waiters.delete(id);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
