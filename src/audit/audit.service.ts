import { Injectable } from '@nestjs/common';
import { stringify } from 'csv-stringify';
import { Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import { DomainError } from '../common/domain-error.js';
import { timeBound } from '../common/time-bound.js';
import type { EntityManager } from 'typeorm';
import { newId } from '../common/ids.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { currentAuditContext, type Actor } from './audit-context.js';
import { AuditRepository, type AuditEventRow, type AuditFilter } from './audit.repository.js';

/** The administrative acts the trail records (docs/admin-api.md#audit-trail). */
export const AUDIT_ACTIONS = [
  'account.created',
  'project.created',
  'project.updated',
  'account_member.put',
  'account_member.removed',
  'project_member.put',
  'project_member.removed',
  'user.created',
  'user.updated',
  'api_key.created',
  'api_key.revoked',
  'grant.created',
  'grant.revoked',
  'login_link.created',
  'oauth_client.deleted',
  'writer_config.saved',
  'identity_provider.created',
  'identity_provider.updated',
  'identity_provider.removed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What a reader narrows the trail to: `actor` is `operator`, a user id or email, or a client id; times are ISO 8601 with their offset. */
export interface AuditQuery {
  actor?: string;
  action?: string;
  from?: string | Date;
  to?: string | Date;
}

/** One act: the account it happened in (null: none), the ids it touched, and what changed (never a secret). */
export interface AuditAct {
  action: AuditAction;
  accountId: string | null;
  target: Record<string, string | null>;
  change?: { before?: unknown; after?: unknown };
  /** Who acts, when not the request's actor (a person's consent, carried out by their client's token request). */
  actor?: Actor;
}

export type AuditEventView = AuditEventRow;

/**
 * The audit trail: every act that changes who can do what records one event, in the act's own
 * transaction (so an act that fails leaves none, and an act never commits without its event). Who
 * acts and from where comes from the request's audit context, which each edge sets (audit-context.ts);
 * outside a request the actor is `system`.
 */
@Injectable()
export class AuditService {
  constructor(private readonly events: AuditRepository) {}

  /**
   * Records `act` inside `tx`, the transaction of the act itself. An update whose before and after
   * are equal (the same role put again, a project or person saved unchanged) changes nothing of who
   * can do what: it records nothing.
   */
  async record(tx: EntityManager, act: AuditAct): Promise<void> {
    if (UPDATES.has(act.action) && act.change && isDeepStrictEqual(act.change.before, act.change.after)) return;
    const context = currentAuditContext();
    const actor = act.actor ?? context?.actor ?? null;
    await this.events.insert(
      {
        id: newId(),
        account_id: act.accountId,
        actor_type: actor?.type ?? 'system',
        actor_id: actor && actor.type !== 'operator' ? actor.id : null,
        actor_email: actor?.type === 'user' ? (actor.email ?? null) : null,
        action: act.action,
        target: act.target,
        change: act.change ?? {},
        ip: context?.ip ?? null,
        user_agent: context?.userAgent ?? null,
        request_id: context?.requestId ?? null,
      },
      tx,
    );
  }

  /** A page of the events of `accountId` (null: of every account, and of none), newest first. */
  async list(accountId: string | null, query: AuditQuery, limit = 50, cursor?: string): Promise<Page<AuditEventView>> {
    return toPage(await this.events.page(filterOf(accountId, query), limit + 1, decodeCursor(cursor)), limit, (e) => e);
  }

  /**
   * An account's filtered events as CSV, newest first, streamed a page at a time; cells a spreadsheet
   * would run as a formula are prefixed with `'`. The filter is checked before the stream is returned.
   */
  exportCsv(accountId: string, query: AuditQuery): Readable {
    const filter = filterOf(accountId, query);
    const events = this.events;
    async function* pages(): AsyncGenerator<unknown[]> {
      let after: string | undefined;
      for (;;) {
        const page = await events.page(filter, EXPORT_PAGE, after);
        for (const e of page) yield CSV_COLUMNS.map((c) => (c === 'target' || c === 'change' ? JSON.stringify(e[c]) : e[c]));
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

/** The acts that update a row in place: with nothing changed they are no act. */
const UPDATES: ReadonlySet<AuditAction> = new Set(['identity_provider.updated', 'project.updated', 'user.updated', 'account_member.put', 'project_member.put']);

const EXPORT_PAGE = 1_000;
const CSV_COLUMNS = ['at', 'actor_type', 'actor_id', 'actor_email', 'action', 'target', 'change', 'ip', 'user_agent', 'request_id', 'id'] as const;

/** The query as the repository's filter; a value no event could have is refused with the field it is in. */
function filterOf(accountId: string | null, query: AuditQuery): AuditFilter {
  const bad = (field: string, sentence: string) => new DomainError('validation_failed', sentence, { field });
  if (query.action !== undefined && !(AUDIT_ACTIONS as readonly unknown[]).includes(query.action))
    throw bad('action', `action must be one of ${AUDIT_ACTIONS.join(', ')}.`);
  if (query.actor !== undefined && (typeof query.actor !== 'string' || query.actor === '' || query.actor.length > 320))
    throw bad('actor', 'actor must be operator, a user id or email, or a client id (1 to 320 characters).');
  const from = timeBound(query.from, 'from');
  const to = timeBound(query.to, 'to');
  if (from && to && from.getTime() >= to.getTime()) throw bad('from', 'from must be before to.');
  return { accountId: accountId ?? undefined, actor: query.actor, action: query.action, from, to };
}
