import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../auth/principal.js';
import { CACHE_CHANNEL, DatabaseNotifications, notifyCache } from '../database/notifications.service.js';
import { RpcCode, RpcError } from './json-rpc.js';

export interface SessionInfo {
  id: string;
  client: { name: string; version: string } | null;
  protocolVersion: string;
}

interface Row {
  id: string;
  credential_id: string;
  protocol_version: string;
  client_name: string | null;
  client_version: string | null;
  ended_at: Date | null;
}

/** How long a session read from Postgres is reused by this instance (an ended one is dropped when told). */
const CACHE_MS = 2_000;
const MAX_CACHED = 20_000;

/**
 * MCP sessions live in Postgres, bound to the credential that opened them, so any instance behind
 * the gateway serves them. Unknown, ended and foreign ids all answer the same 404.
 */
@Injectable()
export class SessionsService {
  private readonly cache = new Map<string, { row: Row; until: number }>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    notifications: DatabaseNotifications,
  ) {
    // A session ended on another instance is dropped here at once.
    notifications.subscribe(CACHE_CHANNEL, (payload) => {
      if (payload.startsWith('session:')) this.cache.delete(payload.slice('session:'.length));
    });
    notifications.onReconnect(() => this.cache.clear());
  }

  async create(principal: Principal, protocolVersion: string, client: { name: string; version: string } | null): Promise<SessionInfo> {
    // 192 random bits, URL-safe: visible ASCII as the transport requires.
    const id = randomBytes(24).toString('base64url');
    await this.db.query(
      `INSERT INTO mcp_sessions (id, account_id, credential_id, protocol_version, client_name, client_version) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, principal.accountId, principal.credential.id, protocolVersion, client?.name ?? null, client?.version ?? null],
    );
    return { id, client, protocolVersion };
  }

  async get(id: string, principal: Principal): Promise<SessionInfo> {
    const now = Date.now();
    let row = this.cache.get(id);
    if (!row || row.until < now) {
      const [found] = (await this.db.query(
        `SELECT id, credential_id, protocol_version, client_name, client_version, ended_at FROM mcp_sessions WHERE id = $1 AND account_id = $2`,
        [id, principal.accountId],
      )) as Row[];
      if (!found) throw notFound();
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      row = { row: found, until: now + CACHE_MS };
      this.cache.set(id, row);
    }
    const s = row.row;
    if (s.ended_at || s.credential_id !== principal.credential.id) throw notFound();
    return { id: s.id, protocolVersion: s.protocol_version, client: s.client_name !== null ? { name: s.client_name, version: s.client_version ?? '' } : null };
  }

  async end(id: string, principal: Principal): Promise<void> {
    const ended = (await this.db.query(
      `WITH u AS (UPDATE mcp_sessions SET ended_at = now() WHERE id = $1 AND credential_id = $2 AND ended_at IS NULL RETURNING id)
       SELECT u.id, ${notifyCache(`'session:' || u.id`)} AS notified FROM u`,
      [id, principal.credential.id],
    )) as unknown[];
    this.cache.delete(id);
    if (!ended.length) throw notFound();
  }
}

function notFound(): RpcError {
  return new RpcError(RpcCode.SessionNotFound, 'Session not found: it ended or belongs to another credential. Initialize a new session.', 404);
}
