import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';

/**
 * Stops the durable work (a job) that an in-flight request started; registered by the tools that
 * start such work. The request (always one of a session, whose ids are never reused) may not have
 * started its work yet, so the cancellation is also kept for it.
 */
export type CancelRequest = (principal: Principal, requestKey: string) => Promise<void>;

/**
 * `notifications/cancelled` reaches whichever instance the gateway picks, not necessarily the one
 * running the call: the registered cancellers look the request up in shared storage by its key.
 */
@Injectable()
export class RequestCancellation {
  private readonly log = new Logger(RequestCancellation.name);
  private readonly cancellers: CancelRequest[] = [];

  register(cancel: CancelRequest): void {
    this.cancellers.push(cancel);
  }

  async cancel(principal: Principal, requestKey: string): Promise<void> {
    for (const cancel of this.cancellers) {
      await cancel(principal, requestKey).catch((err: Error) => this.log.warn(`Cancelling request ${requestKey} failed: ${err.message}`));
    }
  }
}
