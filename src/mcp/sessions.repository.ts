import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { notifyCache } from '../database/notifications.service.js';
import { row, rows, run, sql } from '../database/sql.js';

/** A session as the request path reads it. */
export interface SessionRow {
  id: string;
  credential_id: string;
  protocol_version: string;
  client_name: string | null;
  client_version: string | null;
  client_capabilities: Record<string, unknown>;
  log_level: string | null;
  ended_at: Date | null;
  /** How long ago (Postgres' clock) it was last touched. */
  idle_ms: number;
}

/** A new session's columns. */
export interface SessionInsert {
  id: string;
  accountId: string;
  credentialId: string;
  protocolVersion: string;
  client: { name: string; version: string } | null;
  capabilities: Record<string, unknown>;
}

const INSERT = sql<
  [id: string, accountId: string, credentialId: string, protocolVersion: string, clientName: string | null, clientVersion: string | null, capabilities: string]
>(
  'sessions.insert',
  `INSERT INTO mcp_sessions (id, account_id, credential_id, protocol_version, client_name, client_version, client_capabilities) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`,
);

const FIND = sql<[id: string, accountId: string], SessionRow>(
  'sessions.find',
  `SELECT id, credential_id, protocol_version, client_name, client_version, client_capabilities, log_level, ended_at,
          extract(epoch FROM now() - last_used_at) * 1000 AS idle_ms
     FROM mcp_sessions WHERE id = $1 AND account_id = $2`,
  // Prepared: planning it took three to five times as long as running it (bench/README.md, "One lookup per expiry").
  { hot: true, prepared: true },
);

const TOUCH = sql<[id: string]>('sessions.touch', `UPDATE mcp_sessions SET last_used_at = now() WHERE id = $1 AND ended_at IS NULL`, { hot: true });

/** Sets the live session's log level and tells every instance, which drop their cached copy. */
const SET_LOG_LEVEL = sql<[id: string, credentialId: string, level: string], { id: string }>(
  'sessions.set_log_level',
  `WITH u AS (UPDATE mcp_sessions SET log_level = $3 WHERE id = $1 AND credential_id = $2 AND ended_at IS NULL RETURNING id)
       SELECT u.id, ${notifyCache(`'session:' || u.id`)} AS notified FROM u`,
);

/** Ends a live session of the credential, answering its client, and tells every instance, which drop it from their caches. */
const END = sql<
  [id: string, credentialId: string, idleTtlSeconds: number],
  { id: string; client_name: string | null; client_version: string | null; seconds: number }
>(
  'sessions.end',
  `WITH u AS (UPDATE mcp_sessions SET ended_at = now()
                   WHERE id = $1 AND credential_id = $2 AND ended_at IS NULL AND last_used_at > now() - make_interval(secs => $3)
               RETURNING id, client_name, client_version, EXTRACT(EPOCH FROM ended_at - created_at)::float8 AS seconds)
       SELECT u.id, u.client_name, u.client_version, u.seconds, ${notifyCache(`'session:' || u.id`)} AS notified FROM u`,
);

/**
 * Deletes a batch of expired and ended sessions; answers how many, and how long each expired one lasted
 * (from its creation to its last recorded use; ended ones were measured when they ended).
 */
const PURGE = sql<[idleTtlSeconds: number, batch: number], { n: number; expired: number[] }>(
  'sessions.purge',
  `WITH gone AS (
           DELETE FROM mcp_sessions WHERE id IN (
             SELECT id FROM mcp_sessions WHERE last_used_at <= now() - make_interval(secs => $1) OR ended_at IS NOT NULL
              LIMIT $2 FOR UPDATE SKIP LOCKED
           ) RETURNING CASE WHEN ended_at IS NULL THEN EXTRACT(EPOCH FROM last_used_at - created_at)::float8 END AS seconds
         ) SELECT count(*)::int AS n, coalesce(array_agg(seconds) FILTER (WHERE seconds IS NOT NULL), '{}') AS expired FROM gone`,
);

/** The `mcp_sessions` table. */
@Injectable()
export class SessionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(session: SessionInsert): Promise<void> {
    const { client } = session;
    await run(this.db, INSERT, [
      session.id,
      session.accountId,
      session.credentialId,
      session.protocolVersion,
      client?.name ?? null,
      client?.version ?? null,
      JSON.stringify(session.capabilities),
    ]);
  }

  /** Sets the log level of the credential's live session; answers whether it did. */
  async setLogLevel(id: string, credentialId: string, level: string): Promise<boolean> {
    return (await rows(this.db, SET_LOG_LEVEL, [id, credentialId, level])).length > 0;
  }

  /** The account's session, ended or not, with how long it has been idle. */
  find(id: string, accountId: string): Promise<SessionRow | null> {
    return row(this.db, FIND, [id, accountId]);
  }

  /** Records a use of the session (unless it ended). */
  async touch(id: string): Promise<void> {
    await run(this.db, TOUCH, [id]);
  }

  /** Ends the credential's session if it is live (not ended, not idle for `idleTtlSeconds`); answers its client, or null when there was none to end. */
  async end(id: string, credentialId: string, idleTtlSeconds: number): Promise<{ client: { name: string; version: string } | null; seconds: number } | null> {
    const ended = await row(this.db, END, [id, credentialId, idleTtlSeconds]);
    if (!ended) return null;
    return { client: ended.client_name !== null ? { name: ended.client_name, version: ended.client_version ?? '' } : null, seconds: ended.seconds };
  }

  /** Deletes up to `batch` expired or ended sessions; answers how many, and the duration in seconds of each expired one. */
  async purge(idleTtlSeconds: number, batch: number): Promise<{ n: number; expiredSeconds: number[] }> {
    const purged = (await row(this.db, PURGE, [idleTtlSeconds, batch]))!;
    return { n: purged.n, expiredSeconds: purged.expired };
  }
}
