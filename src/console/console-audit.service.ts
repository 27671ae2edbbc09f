import { Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { AuditService, type AuditEventView, type AuditQuery } from '../audit/audit.service.js';
import { DomainError } from '../common/domain-error.js';
import type { User } from '../users/user.js';
import { ConsoleService, type ConsoleAccount } from './console.service.js';

/** Events on one page of the Audit page. */
export const AUDIT_PAGE_SIZE = 50;

export const AUDIT_QUERY_FIELDS = ['actor', 'action', 'from', 'to', 'cursor'] as const;

/** The Audit page's query string as typed (empty: not given), kept to fill the filter form again. */
export type AuditPageQuery = Record<(typeof AUDIT_QUERY_FIELDS)[number], string>;

export interface AuditPageData extends ConsoleAccount {
  query: AuditPageQuery;
  /** What is wrong with the query, in a sentence (the page answers 400 and lists nothing), or null. */
  problem: string | null;
  events: AuditEventView[];
  next: string | null;
}

/**
 * The console's Audit page (docs/console.md#audit): the account's administrative acts, newest first,
 * with filters, cursor pages and the CSV export. Owners only: a member gets the same 404 as for an
 * account that does not exist. The filters are AuditService's rules (one for the admin API and the
 * console); a refused value is said on the page.
 */
@Injectable()
export class ConsoleAuditService {
  constructor(
    private readonly console: ConsoleService,
    private readonly audit: AuditService,
  ) {}

  async page(user: User, accountId: string, raw: Record<string, unknown>): Promise<AuditPageData> {
    const place = await this.console.ownedAccount(user, accountId);
    const { query, problem: badQuery } = readQuery(raw);
    let problem = badQuery;
    let events: AuditEventView[] = [];
    let next: string | null = null;
    if (!problem) {
      try {
        const page = await this.audit.list(place.membership.account_id, filterOf(query), AUDIT_PAGE_SIZE, query.cursor || undefined);
        events = page.items;
        next = page.next_cursor;
      } catch (err) {
        problem = refusal(err);
      }
    }
    return { ...place, query, problem, events, next };
  }

  /** The filtered events as CSV (streamed), or the page saying which filter is refused. */
  async exportCsv(user: User, accountId: string, raw: Record<string, unknown>): Promise<{ csv: Readable; filename: string } | AuditPageData> {
    const place = await this.console.ownedAccount(user, accountId);
    const { query, problem } = readQuery(raw);
    if (!problem) {
      try {
        const csv = this.audit.exportCsv(place.membership.account_id, filterOf(query));
        return { csv, filename: `reblog-audit-${new Date().toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-')}.csv` };
      } catch (err) {
        refusal(err);
      }
    }
    return this.page(user, accountId, raw);
  }
}

function readQuery(raw: Record<string, unknown>): { query: AuditPageQuery; problem: string | null } {
  let problem: string | null = null;
  const query = Object.fromEntries(
    AUDIT_QUERY_FIELDS.map((field) => {
      const value = raw[field];
      if (value === undefined) return [field, ''];
      if (typeof value !== 'string') {
        problem = 'Give each filter once, as text.';
        return [field, ''];
      }
      return [field, value.trim()];
    }),
  ) as AuditPageQuery;
  return { query, problem };
}

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/;

/** The query as AuditService's; a time without an offset (a `datetime-local` field's) is UTC. */
function filterOf(query: AuditPageQuery): AuditQuery {
  const at = (value: string) => (value && LOCAL_TIME.test(value) ? `${value}Z` : value || undefined);
  return { actor: query.actor || undefined, action: query.action || undefined, from: at(query.from), to: at(query.to) };
}

const PROBLEMS: Record<string, string> = {
  action: 'Choose an action from the list.',
  actor: 'An actor is an email, a user id or operator.',
  from: 'From must be a date and time such as 2026-05-01 09:00, in the zone its label names, before To.',
  to: 'To must be a date and time such as 2026-05-01 18:00, in the zone its label names.',
};

/** The sentence for a refused filter value; anything else is thrown on. */
function refusal(err: unknown): string {
  if (!(err instanceof DomainError && err.code === 'validation_failed')) throw err;
  const field = (err.details as { field?: string } | undefined)?.field;
  return (field && PROBLEMS[field]) || 'This page link is not valid: start again from the newest events.';
}
