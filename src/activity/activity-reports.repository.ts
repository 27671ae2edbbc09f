import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, rows, sql, type Sql } from '../database/sql.js';
import type { ActivityEntry, Outcome } from './activity-entry.entity.js';

/**
 * The listing's optional conditions, in the order their parameters follow the account's; each `?`
 * takes the next parameter. A time bound also bounds the id (UUID v7, whose first 48 bits are the
 * millisecond it was made), so a page in any time range is a range scan of the same indexes that end
 * in the id; `at` stays the exact condition (see {@link ID_SLACK_MS}).
 */
const LIST_CONDITIONS = [
  ['after', 'id < ?'],
  ['outcome', 'outcome = ?'],
  ['credential', 'credential_id = ?'],
  ['method', 'method = ?'],
  ['tool', 'tool = ?'],
  ['client', 'client_name = ?'],
  ['from', 'at >= ? AND id >= ?::uuid'],
  ['to', 'at < ? AND id < ?::uuid'],
] as const;
type ListCondition = (typeof LIST_CONDITIONS)[number][0] | 'credentials';

/**
 * How far an entry's `at` and the time in its id may be apart: both are read in the same call of
 * ActivityWriterService.record (the clock, then the id), so they differ by a millisecond at most; the id
 * bounds of a time range are widened by this much, and `at` decides.
 */
export const ID_SLACK_MS = 1_000;

/** The smallest UUID v7 made at or after `ms`: its time bits, then zeros. */
export function idFloor(ms: number): string {
  const hex = Math.max(0, Math.min(ms, 2 ** 48 - 1))
    .toString(16)
    .padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
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

/**
 * Every variant of the listing (a keyset page), one statement per set of conditions, keyed by their
 * names joined with `_`, made when first used (9 conditions: 512 possible texts, a handful in use).
 *
 * Restricted to a set of credentials (a member's own grants), the page is taken per credential
 * (`LATERAL`, each an index range scan of `(account_id, credential_id, id)`, backwards, up to the limit) and
 * the few pages merged: `credential_id = ANY(...)` cannot be read from any index in id order, and
 * would sort every entry of those credentials.
 */
const LISTS = new Map<string, Sql<unknown[], ActivityEntry>>();
function listStatement(used: readonly ListCondition[], hot = false): Sql<unknown[], ActivityEntry> {
  const key = used.join('_');
  let statement = LISTS.get(key);
  if (!statement) {
    let n = 1;
    const param = () => `$${++n}`;
    const restricted = used.includes('credentials');
    const credentials = restricted ? param() : '';
    const conditions = LIST_CONDITIONS.filter(([name]) => used.includes(name)).map(([, condition]) => condition.replace(/\?/g, param));
    const limit = param();
    const where = ['account_id = $1', ...(restricted ? ['credential_id = c.id'] : []), ...conditions].join(' AND ');
    const text = restricted
      ? `SELECT e.* FROM unnest(${credentials}::uuid[]) AS c(id) CROSS JOIN LATERAL (SELECT * FROM activity_log WHERE ${where} ORDER BY id DESC LIMIT ${limit}) AS e ORDER BY e.id DESC LIMIT ${limit}`
      : `SELECT * FROM activity_log WHERE ${where} ORDER BY id DESC LIMIT ${limit}`;
    statement = sql(`activity.list${key ? `_${key}` : ''}`, text, { hot });
    LISTS.set(key, statement);
  }
  return statement;
}
// The console's first and next pages, of an owner and of a member, kept in src/queries for review.
for (const used of [[], ['after'], ['credentials'], ['credentials', 'after']] as const) listStatement(used, true);

/** The listing's conditions; each one given narrows it. */
export interface ActivityListConditions {
  /** The cursor: entries older than this id. */
  after?: string | null;
  outcome?: string;
  credentialId?: string;
  method?: string;
  tool?: string;
  clientName?: string;
  /** Entries at or after this time. */
  from?: Date;
  /** Entries before this time. */
  to?: Date;
  /** Only these credentials' entries (a member's own grants); empty: none. Absent: the whole account's. */
  credentialIds?: readonly string[];
}

/** The statement of a listing page and its parameters (exported for the bench, which times the same SQL). */
export function listQuery(
  accountId: string,
  conditions: ActivityListConditions,
  limit: number,
): { statement: Sql<unknown[], ActivityEntry>; params: unknown[] } {
  const values: Record<(typeof LIST_CONDITIONS)[number][0], unknown[] | null> = {
    after: conditions.after ? [conditions.after] : null,
    outcome: conditions.outcome ? [conditions.outcome] : null,
    credential: conditions.credentialId ? [conditions.credentialId] : null,
    method: conditions.method ? [conditions.method] : null,
    tool: conditions.tool ? [conditions.tool] : null,
    client: conditions.clientName ? [conditions.clientName] : null,
    from: conditions.from ? [conditions.from, idFloor(conditions.from.getTime() - ID_SLACK_MS)] : null,
    to: conditions.to ? [conditions.to, idFloor(conditions.to.getTime() + ID_SLACK_MS)] : null,
  };
  const used = LIST_CONDITIONS.filter(([name]) => values[name]).map(([name]) => name);
  const restricted = conditions.credentialIds !== undefined;
  return {
    statement: listStatement(restricted ? ['credentials', ...used] : used),
    params: [accountId, ...(restricted ? [conditions.credentialIds] : []), ...used.flatMap((name) => values[name]!), limit],
  };
}

// One entry by id (the primary key), within the account and, when $3 is not null, those credentials.
const FIND = sql<[accountId: string, id: string, credentialIds: readonly string[] | null], ActivityEntry>(
  'activity.find',
  `SELECT * FROM activity_log WHERE id = $2 AND account_id = $1 AND ($3::uuid[] IS NULL OR credential_id = ANY($3::uuid[]))`,
);

/** Chart buckets: an hour or a day, starting at UTC midnight. */
export type ChartBucket = 'hour' | 'day';

/** One bar of the chart: requests (folded entries count for their `count`) of one outcome in one bucket. */
export interface ActivityChartRow {
  bucket: Date;
  outcome: Outcome;
  requests: number;
}

/**
 * Requests per bucket and outcome in `[from, to)`. The buckets are `date_bin` on absolute time from a
 * UTC midnight, so they are UTC hours or days whatever the session's time zone, and an entry at
 * 10:00:00.000 is in the 10:00 bucket. Each bucket is summed on its own (LATERAL): a small hash of
 * outcomes per bucket over an index-only scan of `activity_chart_idx` (account_id, at) INCLUDE
 * (outcome, count, credential_id), where one GROUP BY over the span sorted every entry of it (twice
 * as slow at 240,000 entries in 7 days). `$4` restricts to a set of credentials when not null.
 */
const CHART = sql<[string, Date, Date, readonly string[] | null, string], ActivityChartRow>(
  'activity.chart',
  `SELECT b.start AS bucket, e.outcome, e.requests
    FROM generate_series(date_bin($5::interval, $2::timestamptz, timestamptz '2000-01-01 00:00:00+00'), $3::timestamptz, $5::interval) AS b(start)
    CROSS JOIN LATERAL (
      SELECT outcome, sum(count)::int AS requests
      FROM activity_log
      WHERE account_id = $1 AND at >= greatest(b.start, $2::timestamptz) AND at < least(b.start + $5::interval, $3::timestamptz)
        AND ($4::uuid[] IS NULL OR credential_id = ANY($4::uuid[]))
      GROUP BY outcome
    ) AS e
    ORDER BY 1, 2`,
  { hot: true },
);

/** The chart statement and its parameters (exported for the bench). */
export function chartQuery(
  accountId: string,
  from: Date,
  to: Date,
  bucket: ChartBucket,
  credentialIds?: readonly string[],
): { statement: typeof CHART; params: [string, Date, Date, readonly string[] | null, string] } {
  return { statement: CHART, params: [accountId, from, to, credentialIds ?? null, bucket === 'hour' ? '1 hour' : '1 day'] };
}

/**
 * The reads of `activity_log`: the listing, one entry, the chart, counts per outcome and each
 * credential's use, on the application's pool. The writes are ActivityWriterRepository's.
 */
@Injectable()
export class ActivityReportsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The account's entries, newest first, up to `limit`, narrowed by the conditions given. */
  list(accountId: string, conditions: ActivityListConditions, limit: number): Promise<ActivityEntry[]> {
    const { statement, params } = listQuery(accountId, conditions, limit);
    return rows(this.db, statement, params);
  }

  /** One entry of the account (of those credentials when given), or null. */
  find(accountId: string, id: string, credentialIds?: readonly string[]): Promise<ActivityEntry | null> {
    return row(this.db, FIND, [accountId, id, credentialIds ?? null]);
  }

  /** Requests per bucket and outcome in `[from, to)`, oldest bucket first; buckets without requests are absent. */
  async chart(accountId: string, from: Date, to: Date, bucket: ChartBucket, credentialIds?: readonly string[]): Promise<ActivityChartRow[]> {
    const { statement, params } = chartQuery(accountId, from, to, bucket, credentialIds);
    return rows(this.db, statement, params);
  }

  /** Requests (folded counts added up) per outcome since `since`, of the credentials given or (null) all the account's. */
  outcomesSince(accountId: string, since: Date, credentialIds: string[] | null): Promise<{ outcome: Outcome; n: number }[]> {
    return rows(this.db, OUTCOMES_SINCE, [accountId, idFloor(since.getTime()), credentialIds]);
  }

  /** Each credential's last use and its requests since `since`. */
  usage(accountId: string, credentialIds: string[], since: Date): Promise<{ credential_id: string; last_used_at: Date | null; requests: number }[]> {
    return rows(this.db, USAGE, [accountId, credentialIds, idFloor(since.getTime())]);
  }
}
