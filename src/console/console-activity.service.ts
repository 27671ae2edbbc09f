import { Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { ActivityReportsService, type ActivityChart, type ActivityFilter } from '../activity/activity-reports.service.js';
import { CredentialsService } from '../auth/credentials.service.js';
import { DomainError } from '../common/domain-error.js';
import type { User } from '../users/user.js';
import { ConsoleService, type ConsoleAccount } from './console.service.js';

/** Entries on one page of the Activity log. */
export const ACTIVITY_PAGE_SIZE = 50;

/** The Activity page's query string as typed (empty: not given), kept to fill the filter form again. */
export interface ActivityQuery {
  outcome: string;
  tool: string;
  /** A credential id (API key or grant). */
  credential: string;
  /** The client's name as it introduced itself, exactly. */
  client: string;
  /** Times in ISO 8601: with an offset, or without one (then UTC, as a `datetime-local` field sends it). */
  from: string;
  to: string;
  cursor: string;
  /** `24h` (by hour, the default) or `7d` (by day). */
  chart: string;
}

export const QUERY_FIELDS = ['outcome', 'tool', 'credential', 'client', 'from', 'to', 'cursor', 'chart'] as const satisfies readonly (keyof ActivityQuery)[];

/** A credential the person may filter by: an API key, an admin-made grant or a connected app. */
export interface CredentialChoice {
  id: string;
  name: string;
  type: 'api_key' | 'grant';
  oauth: boolean;
}

export type EntryView = Awaited<ReturnType<ActivityReportsService['list']>>['items'][number];

export interface ActivityPageData extends ConsoleAccount {
  query: ActivityQuery;
  /** What is wrong with the query, in a sentence (the page answers 400 and lists nothing), or null. */
  problem: string | null;
  entries: EntryView[];
  /** The next (older) page's cursor, or null on the last page. */
  next: string | null;
  span: '24h' | '7d';
  chart: ActivityChart;
  credentials: CredentialChoice[];
}

export interface EntryPageData extends ConsoleAccount {
  entry: EntryView;
}

/**
 * The console's Activity page (docs/console.md#activity): the log of what clients did, newest first, with
 * filters, cursor pages, an entry's details, the CSV export of the filtered rows and the chart of
 * requests per hour (24 h) or per day (7 days) by outcome. An owner sees the account's activity, a
 * member that of their own grants ({@link ConsoleService.activityScope}); the filters are checked by
 * ActivityReportsService (one rule for the admin API and the console), and a refused value is shown on the
 * page, never thrown as a server error.
 */
@Injectable()
export class ConsoleActivityService {
  constructor(
    private readonly console: ConsoleService,
    private readonly activity: ActivityReportsService,
    private readonly credentials: CredentialsService,
  ) {}

  /** The page: the filtered entries (one page), the chart and the credentials to filter by. */
  async page(user: User, accountId: string, raw: Record<string, unknown>): Promise<ActivityPageData> {
    const place = await this.console.account(user, accountId);
    const scope = await this.console.activityScope(user, place);
    const { query, problem: badQuery } = readQuery(raw);
    const span = query.chart === '7d' ? '7d' : '24h';
    let problem = badQuery ?? (query.chart && query.chart !== '24h' && query.chart !== '7d' ? 'The chart shows the last 24 hours or the last 7 days.' : null);
    const id = place.membership.account_id;
    const [listed, chart, credentials] = await Promise.all([
      problem ? null : refusal(this.activity.list(id, filterOf(query), ACTIVITY_PAGE_SIZE, query.cursor || undefined, scope)),
      this.activity.chart(id, span, span === '24h' ? 'hour' : 'day', scope),
      this.choices(user, place),
    ]);
    if (listed && 'problem' in listed) problem = listed.problem;
    const page = listed && !('problem' in listed) ? listed : null;
    return { ...place, query, problem, entries: page?.items ?? [], next: page?.next_cursor ?? null, span, chart, credentials };
  }

  /**
   * The filtered entries as CSV (ActivityReportsService.exportCsv, streamed), or, when a filter is refused,
   * the page with the sentence saying why.
   */
  async exportCsv(user: User, accountId: string, raw: Record<string, unknown>): Promise<{ csv: Readable; filename: string } | ActivityPageData> {
    const place = await this.console.account(user, accountId);
    const { query, problem } = readQuery(raw);
    if (!problem) {
      const scope = await this.console.activityScope(user, place);
      try {
        // exportCsv checks the filter before it returns the stream: a bad value throws here.
        const csv = this.activity.exportCsv(place.membership.account_id, filterOf(query), scope);
        return { csv, filename: `reblog-activity-${new Date().toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-')}.csv` };
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'validation_failed')) throw err;
      }
    }
    // The page says what is wrong (the same check, the same sentence).
    return this.page(user, accountId, raw);
  }

  /** One entry the person may see (not_found otherwise, as an id that does not exist). */
  async entry(user: User, accountId: string, entryId: string): Promise<EntryPageData> {
    const place = await this.console.account(user, accountId);
    const entry = await this.activity.entry(place.membership.account_id, entryId, await this.console.activityScope(user, place));
    return { ...place, entry };
  }

  /** The credentials whose activity the person sees: an owner's account keys and grants, a member's own apps. */
  private async choices(user: User, place: ConsoleAccount): Promise<CredentialChoice[]> {
    const id = place.membership.account_id;
    const found =
      place.membership.role === 'owner'
        ? [...(await this.credentials.list(id, 'api_key', 200)).items, ...(await this.credentials.list(id, 'grant', 200)).items]
        : await this.credentials.connections(id, user.id);
    return found.map((c) => ({ id: c.id, name: c.name, type: c.type, oauth: c.source === 'oauth' })).sort((a, b) => a.name.localeCompare(b.name));
  }
}

/** The query string's fields: each one text, given at most once. */
export function readQuery(raw: Record<string, unknown>): { query: ActivityQuery; problem: string | null } {
  let problem: string | null = null;
  const query = Object.fromEntries(
    QUERY_FIELDS.map((field) => {
      const value = raw[field];
      if (value === undefined) return [field, ''];
      if (typeof value !== 'string') {
        problem = 'Give each filter once, as text.';
        return [field, ''];
      }
      return [field, value.trim()];
    }),
  ) as unknown as ActivityQuery;
  return { query, problem };
}

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/;

/** The query as ActivityReportsService's filter; a time without an offset (a `datetime-local` field's) is UTC. */
export function filterOf(query: ActivityQuery): ActivityFilter {
  const at = (value: string) => (value && LOCAL_TIME.test(value) ? `${value}Z` : value || undefined);
  return {
    outcome: query.outcome || undefined,
    tool: query.tool || undefined,
    credential_id: query.credential || undefined,
    client_name: query.client || undefined,
    from: at(query.from),
    to: at(query.to),
  };
}

/** The console's words for a refused filter value (ActivityReportsService says which field). */
const PROBLEMS: Record<string, string> = {
  outcome: 'Choose an outcome from the list.',
  credential_id: 'Choose a key or app from the list.',
  tool: 'A tool name is 1 to 100 characters.',
  client_name: 'A client name is 1 to 200 characters.',
  from: 'From must be a date and time such as 2026-05-01 09:00, in the zone its label names, before To.',
  to: 'To must be a date and time such as 2026-05-01 18:00, in the zone its label names.',
};

/** The listing, or the sentence saying which filter value it refused. */
async function refusal<T>(listing: Promise<T>): Promise<T | { problem: string }> {
  try {
    return await listing;
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'validation_failed')) throw err;
    const field = (err.details as { field?: string } | undefined)?.field;
    // The one refusal without a field is the cursor's: a page link from elsewhere, or an edited one.
    return { problem: (field && PROBLEMS[field]) || (field ? err.message : 'This page link is not valid: start again from the newest entries.') };
  }
}
