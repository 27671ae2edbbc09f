import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, rows, sql } from '../database/sql.js';

/** The channel the `articles_resource_updated` trigger sends a watched article's id on (migration 1764900000100). */
export const RESOURCES_CHANNEL = 'reblog_resources';

/** Subscriptions one session may hold: a bound on what one client can make the server track. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1_000;

// Idempotent; concurrent duplicates meet on the primary key. The count keeps a session under its bound.
const subscribe = sql<[sessionId: string, uri: string, articleId: string | null, max: number]>(
  'resource_subscriptions.subscribe',
  `INSERT INTO mcp_resource_subscriptions (session_id, uri, article_id)
   SELECT $1, $2, $3 WHERE (SELECT count(*) FROM mcp_resource_subscriptions WHERE session_id = $1) < $4
      OR EXISTS (SELECT 1 FROM mcp_resource_subscriptions WHERE session_id = $1 AND uri = $2)
   ON CONFLICT (session_id, uri) DO UPDATE SET article_id = EXCLUDED.article_id`,
);
const unsubscribe = sql<[sessionId: string, uri: string]>(
  'resource_subscriptions.unsubscribe',
  `DELETE FROM mcp_resource_subscriptions WHERE session_id = $1 AND uri = $2`,
);
const watching = sql<[articleId: string, sessionIds: string[]], { session_id: string; uri: string }>(
  'resource_subscriptions.watching',
  `SELECT session_id, uri FROM mcp_resource_subscriptions WHERE article_id = $1 AND session_id = ANY($2::text[])`,
);
// Every write of an article sets updated_at (a trash too); a row deleted outright has no article left.
const changedSince = sql<[sessionIds: string[], since: Date], { session_id: string; uri: string }>(
  'resource_subscriptions.changed_since',
  `SELECT s.session_id, s.uri FROM mcp_resource_subscriptions s LEFT JOIN articles a ON a.id = s.article_id
   WHERE s.session_id = ANY($1::text[]) AND s.article_id IS NOT NULL AND (a.id IS NULL OR a.updated_at >= $2)`,
);

/** `mcp_resource_subscriptions`: which session watches which URI. */
@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Records the subscription (again: nothing changes); false when the session holds its maximum already. */
  async subscribe(sessionId: string, uri: string, articleId: string | null): Promise<boolean> {
    return (await affected(this.db, subscribe, [sessionId, uri, articleId, MAX_SUBSCRIPTIONS_PER_SESSION])) > 0;
  }

  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    await affected(this.db, unsubscribe, [sessionId, uri]);
  }

  /** The URIs of `sessionIds` that watch the article. */
  watching(articleId: string, sessionIds: string[]): Promise<{ session_id: string; uri: string }[]> {
    return rows(this.db, watching, [articleId, sessionIds]);
  }

  /** The URIs of `sessionIds` whose article changed at `since` or later. */
  changedSince(sessionIds: string[], since: Date): Promise<{ session_id: string; uri: string }[]> {
    return rows(this.db, changedSince, [sessionIds, since]);
  }
}
