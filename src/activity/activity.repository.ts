import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { openAsyncCommitPool } from '../database/async-commit-pool.js';
import { rows, run, sql, type Sql } from '../database/sql.js';
import type { ActivityEntry, Outcome } from './activity-entry.entity.js';

/** A new entry, column by column. */
export interface ActivityInsert {
  id: string;
  at: Date;
  account_id: string;
  credential_type: string;
  credential_id: string;
  credential_name: string;
  client_name: string | null;
  client_version: string | null;
  session_id: string | null;
  method: string;
  tool: string | null;
  project_id: string | null;
  outcome: Outcome;
  /** JSON text. */
  error: string | null;
  duration_ms: number;
  count: number;
  fold_key: string | null;
}

const COLUMNS = ['id', 'at', 'account_id', 'credential_type', 'credential_id', 'credential_name', 'client_name', 'client_version', 'session_id', 'method', 'tool', 'project_id', 'outcome', 'error', 'duration_ms', 'count', 'fold_key'] as const satisfies readonly (keyof ActivityInsert)[];
const TYPES = ['uuid', 'timestamptz', 'uuid', 'text', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text', 'uuid', 'text', 'jsonb', 'int4', 'int4', 'text'];

/**
 * One statement for any batch: one array per column (the SQL text never changes, and it stays cheap
 * for large batches). A folded entry adds its count to the row already holding its fold key.
 * Prepared: parsed and planned once per connection.
 */
const INSERT = sql<unknown[][]>(
  'activity.insert',
  `INSERT INTO activity_log (${COLUMNS.join(', ')}) ` +
    `SELECT * FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) ` +
    `ON CONFLICT (fold_key) WHERE fold_key IS NOT NULL DO UPDATE SET count = activity_log.count + EXCLUDED.count`,
  { hot: true, prepared: true },
);

/** The listing's optional conditions, in the order their parameters follow the account's. */
const LIST_CONDITIONS = [
  ['after', 'id <'],
  ['outcome', 'outcome ='],
  ['credential', 'credential_id ='],
  ['method', 'method ='],
  ['tool', 'tool ='],
] as const;
type ListCondition = (typeof LIST_CONDITIONS)[number][0];

/** Every variant of the listing (a keyset page), one statement per set of conditions, keyed by their names joined with `_`. */
const LISTS = new Map<string, Sql<unknown[], ActivityEntry>>();
for (let mask = 0; mask < 1 << LIST_CONDITIONS.length; mask++) {
  const used = LIST_CONDITIONS.filter((_, i) => mask & (1 << i));
  const where = ['account_id = $1', ...used.map(([, condition], i) => `${condition} $${i + 2}`)];
  const key = used.map(([name]) => name).join('_');
  LISTS.set(key, sql(`activity.list${key ? `_${key}` : ''}`, `SELECT * FROM activity_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${used.length + 2}`));
}

// Counts since an id: ids are UUID v7, so `id >= floor` is `at >= since` on the account's indexes.
// $3 null: every credential of the account; else only those credentials'.
const OUTCOMES_SINCE = sql<[accountId: string, floor: string, credentialIds: string[] | null], { outcome: Outcome; n: number }>(
  'activity.outcomes_since',
  `SELECT outcome, sum(count)::int AS n FROM activity_log
    WHERE account_id = $1 AND id >= $2::uuid AND ($3::uuid[] IS NULL OR credential_id = ANY($3::uuid[]))
    GROUP BY outcome`,
);

// Per credential: its newest entry's time and its requests since the floor (activity_credential_idx).
const USAGE = sql<[accountId: string, credentialIds: string[], floor: string], { credential_id: string; last_used_at: Date | null; requests: number }>(
  'activity.usage',
  `SELECT c.id AS credential_id,
          (SELECT at FROM activity_log WHERE account_id = $1 AND credential_id = c.id ORDER BY id DESC LIMIT 1) AS last_used_at,
          (SELECT coalesce(sum(count), 0)::int FROM activity_log WHERE account_id = $1 AND credential_id = c.id AND id >= $3::uuid) AS requests
     FROM unnest($2::uuid[]) AS c(id)`,
);

/** The smallest UUID v7 of the millisecond `at`: every id made at or after it sorts at or above it. */
export function idFloor(at: Date): string {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/** The listing's conditions; each one given narrows it. */
export interface ActivityListConditions {
  after?: string | null;
  outcome?: string;
  credentialId?: string;
  method?: string;
  tool?: string;
}

/** Connections of the writer's pool: as many batches may be written at the same time. */
export const WRITER_CONNECTIONS = 3;

/**
 * The `activity_log` table. Inserts go through the writer's own connections, which commit
 * asynchronously (`synchronous_commit = off`; see ActivityService for why that is safe enough).
 */
@Injectable()
export class ActivityRepository {
  private readonly log = new Logger(ActivityRepository.name);
  private readonly writer: pg.Pool;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.writer = openAsyncCommitPool(db, 'activity', WRITER_CONNECTIONS, this.log);
  }

  /** Inserts the entries in one statement; an entry with the fold key of a stored one adds its count to it instead. */
  async insert(entries: readonly ActivityInsert[]): Promise<void> {
    await run(this.writer, INSERT, COLUMNS.map((column) => entries.map((entry) => entry[column])));
  }

  /** The account's entries, newest first, up to `limit`, narrowed by the conditions given. */
  list(accountId: string, conditions: ActivityListConditions, limit: number): Promise<ActivityEntry[]> {
    const values: Record<ListCondition, unknown> = { after: conditions.after, outcome: conditions.outcome, credential: conditions.credentialId, method: conditions.method, tool: conditions.tool };
    const used = LIST_CONDITIONS.filter(([name]) => values[name]);
    return rows(this.db, LISTS.get(used.map(([name]) => name).join('_'))!, [accountId, ...used.map(([name]) => values[name]), limit]);
  }

  /** Requests (folded counts added up) per outcome since `since`, of the credentials given or (null) all the account's. */
  outcomesSince(accountId: string, since: Date, credentialIds: string[] | null): Promise<{ outcome: Outcome; n: number }[]> {
    return rows(this.db, OUTCOMES_SINCE, [accountId, idFloor(since), credentialIds]);
  }

  /** Each credential's last use and its requests since `since`. */
  usage(accountId: string, credentialIds: string[], since: Date): Promise<{ credential_id: string; last_used_at: Date | null; requests: number }[]> {
    return rows(this.db, USAGE, [accountId, credentialIds, idFloor(since)]);
  }

  /** Closes the writer's connections; called once the last entries are written. */
  async close(): Promise<void> {
    await this.writer.end().catch(() => undefined);
  }
}
