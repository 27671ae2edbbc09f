import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, rows, run, sql } from '../database/sql.js';

/** Carries the id of a server→client request whose answer (or cancellation) was just recorded. */
export const CLIENT_REQUESTS_CHANNEL = 'reblog_client_requests';
const notifyAnswered = (id: string) => `pg_notify('${CLIENT_REQUESTS_CHANNEL}', ${id})`;

/** A pending request as its waiter reads it. */
export interface ClientRequestRow {
  /** The client's JSON-RPC response (`{result}` or `{error}`), once it came. */
  response: { result?: unknown; error?: { code?: unknown; message?: unknown } } | null;
  /** The call was cancelled, or the session ended. */
  cancelled: boolean;
}

const INSERT = sql<[id: string, sessionId: string, credentialId: string, requestKey: string | null, method: string, timeoutMs: number]>(
  'client_requests.insert',
  `INSERT INTO mcp_client_requests (id, session_id, credential_id, request_key, method, expires_at)
        VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::double precision / 1000))`,
);

/** The request's answer; cancelled too when its session ended. */
const FIND = sql<[id: string], ClientRequestRow>(
  'client_requests.find',
  `SELECT r.response, r.cancelled_at IS NOT NULL OR s.ended_at IS NOT NULL AS cancelled
     FROM mcp_client_requests r JOIN mcp_sessions s ON s.id = r.session_id
    WHERE r.id = $1`,
);

/**
 * Records the client's response to a request of this session and credential that still waits (not
 * answered, cancelled or expired), and wakes its waiter wherever it runs. Anything else changes nothing.
 */
const ANSWER = sql<[id: string, sessionId: string, credentialId: string, response: string], { id: string }>(
  'client_requests.answer',
  `WITH u AS (UPDATE mcp_client_requests SET response = $4::jsonb, answered_at = now()
                   WHERE id = $1 AND session_id = $2 AND credential_id = $3
                     AND answered_at IS NULL AND cancelled_at IS NULL AND expires_at > now()
               RETURNING id)
       SELECT u.id, ${notifyAnswered('u.id')} AS notified FROM u`,
);

/** Cancels the pending requests of a cancelled tools/call (named by its request key) of this credential. */
const CANCEL_BY_REQUEST = sql<[requestKey: string, credentialId: string], { id: string }>(
  'client_requests.cancel_by_request',
  `WITH u AS (UPDATE mcp_client_requests SET cancelled_at = now()
                   WHERE request_key = $1 AND credential_id = $2 AND answered_at IS NULL AND cancelled_at IS NULL
               RETURNING id)
       SELECT u.id, ${notifyAnswered('u.id')} AS notified FROM u`,
);

const DELETE = sql<[id: string]>('client_requests.delete', `DELETE FROM mcp_client_requests WHERE id = $1`);

/** Rows whose waiter is gone (its instance stopped): expired a while ago. */
const PURGE = sql<[graceSeconds: number, batch: number]>(
  'client_requests.purge',
  `DELETE FROM mcp_client_requests WHERE id IN (
      SELECT id FROM mcp_client_requests WHERE expires_at < now() - make_interval(secs => $1) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
);

/** The `mcp_client_requests` table: server→client requests awaiting an answer. */
@Injectable()
export class ClientRequestsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(r: { id: string; sessionId: string; credentialId: string; requestKey: string | null; method: string; timeoutMs: number }): Promise<void> {
    await run(this.db, INSERT, [r.id, r.sessionId, r.credentialId, r.requestKey, r.method, r.timeoutMs]);
  }

  /** The request, or null when it is gone (its session ended, say). */
  find(id: string): Promise<ClientRequestRow | null> {
    return row(this.db, FIND, [id]);
  }

  /** Answers whether the response was recorded. */
  async answer(id: string, sessionId: string, credentialId: string, response: object): Promise<boolean> {
    return (await rows(this.db, ANSWER, [id, sessionId, credentialId, JSON.stringify(response)])).length > 0;
  }

  async cancelByRequest(requestKey: string, credentialId: string): Promise<number> {
    return (await rows(this.db, CANCEL_BY_REQUEST, [requestKey, credentialId])).length;
  }

  async delete(id: string): Promise<void> {
    await run(this.db, DELETE, [id]);
  }

  purge(graceSeconds: number, batch: number): Promise<number> {
    return affected(this.db, PURGE, [graceSeconds, batch]);
  }
}
