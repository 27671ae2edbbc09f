import { Injectable } from '@nestjs/common';
import { stringify } from 'csv-stringify';
import { Readable } from 'node:stream';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { isUuid } from '../common/ids.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { timeBound as time } from '../common/time-bound.js';
import { OUTCOMES, type ActivityEntry, type Outcome } from './activity-entry.entity.js';
import { ActivityReportsRepository, type ActivityListConditions, type ChartBucket } from './activity-reports.repository.js';

/** The listing's filters, as the admin API and the console take them; each one given narrows it. */
export interface ActivityFilter {
  outcome?: string;
  credential_id?: string;
  method?: string;
  tool?: string;
  /** The client's name as it introduced itself (`clientInfo.name`), exactly. */
  client_name?: string;
  /** Entries at or after this time (an ISO 8601 time with its offset, or a Date). */
  from?: string | Date;
  /** Entries before this time. */
  to?: string | Date;
}

/**
 * Whose entries a reader may see: the whole account's (owners, the admin API), or only those of a set
 * of credentials (a member: their own grants). An empty set sees nothing.
 */
export interface ActivityScope {
  credentialIds?: readonly string[];
}

/** The chart's span: the last 24 hours by hour, or the last 7 days by hour or by day. */
export type ChartSpan = '24h' | '7d';

/** Requests per UTC bucket, stacked by outcome, oldest first; every bucket of the span is there. */
export interface ActivityChart {
  bucket: ChartBucket;
  from: Date;
  to: Date;
  buckets: { start: Date; total: number; outcomes: Record<Outcome, number> }[];
}

/** Columns of the CSV export, in order. */
export const CSV_COLUMNS = [
  'id',
  'at',
  'credential_type',
  'credential_id',
  'credential_name',
  'client_name',
  'client_version',
  'session_id',
  'method',
  'tool',
  'project_id',
  'outcome',
  'error_code',
  'error_message',
  'duration_ms',
  'count',
] as const;

/**
 * The account owner's activity log, as the admin API and the console read it: the listing (filtered,
 * scoped, by cursor), one entry, the chart, the CSV export, counts per outcome and each credential's
 * use. The entries are written by ActivityWriterService.
 */
@Injectable()
export class ActivityReportsService {
  constructor(
    private readonly entries: ActivityReportsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Requests per outcome since `since` (every outcome present, 0 when none), of the credentials given
   * or, with null, of the whole account.
   */
  async outcomesSince(accountId: string, since: Date, credentialIds: string[] | null): Promise<Record<Outcome, number>> {
    const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    if (credentialIds && !credentialIds.length) return counts;
    for (const { outcome, n } of await this.entries.outcomesSince(accountId, since, credentialIds)) counts[outcome] = n;
    return counts;
  }

  /** Each credential's last use (null if never) and its requests since `since`. */
  async usage(accountId: string, credentialIds: string[], since: Date): Promise<Map<string, { lastUsedAt: Date | null; requests: number }>> {
    if (!credentialIds.length) return new Map();
    const found = await this.entries.usage(accountId, credentialIds, since);
    return new Map(found.map((u) => [u.credential_id, { lastUsedAt: u.last_used_at, requests: u.requests }]));
  }

  /** A page of the account's entries (or of the scope's credentials), newest first, narrowed by the filter. */
  async list(accountId: string, filter: ActivityFilter, limit = 50, cursor?: string, scope: ActivityScope = {}): Promise<Page<ReturnType<typeof view>>> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
      throw new DomainError('validation_failed', `limit must be a whole number from 1 to ${MAX_PAGE}.`, { field: 'limit' });
    const conditions = { ...listConditions(filter, scope), after: decodeCursor(cursor) };
    return toPage(await this.entries.list(accountId, conditions, limit + 1), limit, view);
  }

  /** One entry of the account (or of the scope's credentials), as the listing shows it; not_found outside them. */
  async entry(accountId: string, id: string, scope: ActivityScope = {}): Promise<ReturnType<typeof view>> {
    const found = isUuid(id) ? await this.entries.find(accountId, id.toLowerCase(), scopeIds(scope)) : null;
    if (!found) throw DomainError.notFound('activity entry', id);
    return view(found);
  }

  /**
   * Requests per bucket over the span, stacked by outcome: the last 24 hours (hourly) or 7 days (hourly
   * or daily), in UTC buckets. The span ends now and starts at the boundary of the oldest bucket, so
   * the first bucket is whole and the last one is the bucket in progress.
   */
  async chart(accountId: string, span: ChartSpan = '24h', bucket: ChartBucket = 'hour', scope: ActivityScope = {}): Promise<ActivityChart> {
    if (span !== '24h' && span !== '7d') throw new DomainError('validation_failed', 'span must be "24h" or "7d".', { field: 'span' });
    if (bucket !== 'hour' && bucket !== 'day') throw new DomainError('validation_failed', 'bucket must be "hour" or "day".', { field: 'bucket' });
    if (span === '24h' && bucket === 'day')
      throw new DomainError('validation_failed', 'The 24 h chart is by hour; by day needs span "7d".', { field: 'bucket' });
    const credentialIds = scopeIds(scope);
    const size = bucket === 'hour' ? HOUR_MS : DAY_MS;
    const count = span === '24h' ? 24 : bucket === 'hour' ? 7 * 24 : 7;
    const to = this.clock.now();
    const from = new Date(Math.floor(to.getTime() / size) * size - (count - 1) * size);
    const buckets = Array.from({ length: count }, (_, i) => ({
      start: new Date(from.getTime() + i * size),
      total: 0,
      outcomes: Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>,
    }));
    // The end is exclusive: an entry recorded in this very millisecond is in the next chart, not lost.
    const end = new Date(to.getTime() + 1);
    for (const row of await this.entries.chart(accountId, from, end, bucket, credentialIds)) {
      const slot = buckets[Math.round((row.bucket.getTime() - from.getTime()) / size)];
      if (!slot || !(row.outcome in slot.outcomes)) continue;
      slot.outcomes[row.outcome] += row.requests;
      slot.total += row.requests;
    }
    return { bucket, from, to: end, buckets };
  }

  /**
   * The filtered entries as CSV (a header, then one line per entry, newest first), streamed: pages of
   * {@link EXPORT_PAGE} entries are read by cursor as the reader consumes the text, so an export of
   * any size holds one page in memory. Cells a spreadsheet would run as a formula (starting with
   * = + - @, a tab or a carriage return) are prefixed with `'`. The filter is checked before the
   * stream is returned (a bad value throws here, not mid-stream); entries recorded after the export
   * started are not in it (they are newer than its first page).
   */
  exportCsv(accountId: string, filter: ActivityFilter, scope: ActivityScope = {}): Readable {
    const conditions = listConditions(filter, scope);
    const entries = this.entries;
    async function* pages(): AsyncGenerator<unknown[]> {
      let after: string | null = null;
      for (;;) {
        const page = await entries.list(accountId, { ...conditions, after }, EXPORT_PAGE);
        for (const e of page) yield csvRecord(e);
        if (page.length < EXPORT_PAGE) return;
        after = page[page.length - 1].id;
      }
    }
    const csv = stringify({ header: true, columns: [...CSV_COLUMNS], escape_formulas: true, cast: { date: (d) => d.toISOString() } });
    const source = Readable.from(pages());
    source.once('error', (err) => csv.destroy(err));
    csv.once('close', () => source.destroy());
    return source.pipe(csv);
  }
}

const MAX_PAGE = 200;
/** Entries per statement of a CSV export. */
const EXPORT_PAGE = 1_000;
/** Credentials a scope may name (a member's grants are a handful). */
const MAX_SCOPE = 1_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const TEXT_FILTERS = [
  ['method', 100],
  ['tool', 100],
  ['client_name', 200],
] as const;

/** The filter and scope as the repository's conditions; a value no entry could have is refused with the field it is in. */
function listConditions(filter: ActivityFilter, scope: ActivityScope): ActivityListConditions {
  const bad = (field: string, sentence: string) => new DomainError('validation_failed', sentence, { field });
  if (filter.outcome !== undefined && !(OUTCOMES as readonly unknown[]).includes(filter.outcome))
    throw bad('outcome', `outcome must be one of ${OUTCOMES.join(', ')}.`);
  if (filter.credential_id !== undefined && !isUuid(filter.credential_id)) throw bad('credential_id', 'credential_id must be a UUID.');
  for (const [field, max] of TEXT_FILTERS) {
    const value = filter[field];
    if (value !== undefined && (typeof value !== 'string' || value === '' || value.length > max))
      throw bad(field, `${field} must be a text of 1 to ${max} characters.`);
  }
  const from = time(filter.from, 'from');
  const to = time(filter.to, 'to');
  if (from && to && from.getTime() >= to.getTime()) throw bad('from', 'from must be before to.');
  return {
    outcome: filter.outcome,
    credentialId: filter.credential_id,
    method: filter.method,
    tool: filter.tool,
    clientName: filter.client_name,
    from,
    to,
    credentialIds: scopeIds(scope),
  };
}

function scopeIds(scope: ActivityScope): readonly string[] | undefined {
  const ids = scope.credentialIds;
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || ids.length > MAX_SCOPE || !ids.every(isUuid))
    throw new DomainError('validation_failed', `A scope is at most ${MAX_SCOPE} credential UUIDs.`, { field: 'credentialIds' });
  // Each credential once: the member's page is merged from one page per credential.
  return [...new Set(ids)];
}

/** One CSV line of an entry, in {@link CSV_COLUMNS} order. */
function csvRecord(e: ActivityEntry): unknown[] {
  return [
    e.id,
    e.at,
    e.credential_type,
    e.credential_id,
    e.credential_name,
    e.client_name,
    e.client_version,
    e.session_id,
    e.method,
    e.tool,
    e.project_id,
    e.outcome,
    e.error?.code ?? null,
    e.error?.message ?? null,
    e.duration_ms,
    e.count,
  ];
}

function view(e: ActivityEntry) {
  return {
    id: e.id,
    at: e.at,
    credential: { type: e.credential_type, id: e.credential_id, name: e.credential_name },
    client: e.client_name !== null ? { name: e.client_name, version: e.client_version ?? '' } : null,
    session_id: e.session_id,
    method: e.method,
    tool: e.tool,
    project_id: e.project_id,
    outcome: e.outcome,
    error: e.error,
    duration_ms: e.duration_ms,
    count: e.count,
    request_id: e.request_id,
  };
}
