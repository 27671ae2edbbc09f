import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rows, run, sql, type Queryable } from '../database/sql.js';

/** One row of the audit trail. */
export interface AuditEventRow {
  id: string;
  at: Date;
  account_id: string | null;
  actor_type: 'operator' | 'user' | 'client' | 'credential' | 'system';
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target: Record<string, unknown>;
  change: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

/** What a page of the trail is narrowed to: an account (else every event), an actor (`operator`, a user id or email), an action, a time range. */
export interface AuditFilter {
  accountId?: string;
  actor?: string;
  action?: string;
  from?: Date;
  to?: Date;
}

type InsertParams = [
  id: string,
  accountId: string | null,
  actorType: string,
  actorId: string | null,
  actorEmail: string | null,
  action: string,
  target: string,
  change: string,
  ip: string | null,
  userAgent: string | null,
  requestId: string | null,
];

const insert = sql<InsertParams, never>(
  'audit_events.insert',
  `INSERT INTO audit_events (id, account_id, actor_type, actor_id, actor_email, action, target, change, ip, user_agent, request_id)
   VALUES ($1, $2, $3, $4, coalesce($5, CASE WHEN $3 = 'user' THEN (SELECT email FROM users WHERE id::text = $4) END), $6, $7::jsonb, $8::jsonb, $9, $10, $11)`,
);

// Newest first by (at, id); every filter is optional (a null parameter matches all). The cursor is the
// id of the last event seen: the page continues after its (at, id).
const page = sql<
  [accountId: string | null, actor: string | null, action: string | null, from: Date | null, to: Date | null, afterId: string | null, limit: number],
  AuditEventRow
>(
  'audit_events.page',
  `SELECT * FROM audit_events e
   WHERE ($1::uuid IS NULL OR e.account_id = $1)
     AND ($2::text IS NULL OR ($2 = 'operator' AND e.actor_type = 'operator') OR e.actor_id = $2 OR lower(e.actor_email) = lower($2))
     AND ($3::text IS NULL OR e.action = $3)
     AND ($4::timestamptz IS NULL OR e.at >= $4)
     AND ($5::timestamptz IS NULL OR e.at < $5)
     AND ($6::uuid IS NULL OR (e.at, e.id) < (SELECT a.at, a.id FROM audit_events a WHERE a.id = $6))
   ORDER BY e.at DESC, e.id DESC
   LIMIT $7`,
);

/** The statements of `audit_events`: insert and read, never update (the table refuses it too). */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(event: Omit<AuditEventRow, 'at'>, db: Queryable): Promise<void> {
    await run(db, insert, [
      event.id,
      event.account_id,
      event.actor_type,
      event.actor_id,
      event.actor_email,
      event.action,
      JSON.stringify(event.target),
      JSON.stringify(event.change),
      event.ip,
      event.user_agent,
      event.request_id,
    ]);
  }

  page(filter: AuditFilter, limit: number, afterId?: string, db: Queryable = this.db): Promise<AuditEventRow[]> {
    return rows(db, page, [
      filter.accountId ?? null,
      filter.actor ?? null,
      filter.action ?? null,
      filter.from ?? null,
      filter.to ?? null,
      afterId ?? null,
      limit,
    ]);
  }
}
