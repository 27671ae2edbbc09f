import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { isUuid } from '../common/ids.js';
import type { Page } from '../common/pagination.js';
import { checkArticleFields } from './article-rules.js';
import type { Article } from './article.entity.js';
import { articleView, TRASH_DAYS, trashedView, type ArticleView, type TrashedArticleView } from './article.views.js';
import { ArticlesService, isUniqueViolation, recordRevisions } from './articles.service.js';

/** Trashed rows purged per statement, so a large purge never holds many locks at once. */
const PURGE_BATCH = 500;

// Exact to the microsecond, which a JS Date is not.
const AFTER_CURSOR = `AND (deleted_at, id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid)`;
const SUMMARY = 'id, account_id, project_id, handle, title, excerpt, status, tags, published_at, updated_at, version, deleted_at, deleted_by';

/**
 * The trash of deleted articles, for admins: listed per project (newest deletion first), restorable,
 * and purged once older than {@link TRASH_DAYS} days by Postgres' clock.
 */
@Injectable()
export class ArticleTrashService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly articles: ArticlesService,
  ) {}

  async list(projectId: string, limit = 50, cursor?: string): Promise<Page<TrashedArticleView>> {
    const [project] = (await this.db.query(`SELECT account_id FROM projects WHERE id = $1`, [projectId])) as { account_id: string }[];
    if (!project) throw DomainError.notFound('project', projectId);
    const after = decodeTrashCursor(cursor);
    const params: unknown[] = [project.account_id, projectId, limit + 1];
    if (after) params.push(after.deletedAt, after.id);
    const rows = (await this.db.query(
      `SELECT ${SUMMARY}, (extract(epoch FROM deleted_at) * 1000000)::bigint::text AS cursor_at FROM articles
        WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NOT NULL ${after ? AFTER_CURSOR : ''}
        ORDER BY deleted_at DESC, id DESC LIMIT $3`,
      params,
    )) as (Article & { cursor_at: string })[];
    const more = rows.length > limit;
    const items = more ? rows.slice(0, limit) : rows;
    const last = items[items.length - 1];
    return { items: items.map(trashedView), next_cursor: more ? encodeTrashCursor(last.cursor_at, last.id) : null };
  }

  /**
   * Puts a trashed article back, under its own handle or `handle` when given. A handle a live article
   * took meanwhile is a `handle_taken` conflict naming a free one.
   */
  async restore(articleId: string, handle?: string): Promise<ArticleView> {
    if (handle !== undefined) checkArticleFields({ handle });
    if (!isUuid(articleId)) throw notInTrash(articleId);
    let target: { accountId: string; projectId: string; handle: string } | undefined;
    try {
      return await this.db.transaction(async (m) => {
        const [before] = (await m.query(`SELECT * FROM articles WHERE id = $1 FOR UPDATE`, [articleId])) as Article[];
        if (!before) throw notInTrash(articleId);
        if (before.deleted_at === null) throw new DomainError('invalid_state', `The article "${articleId}" is not in the trash; it is live.`);
        target = { accountId: before.account_id, projectId: before.project_id, handle: handle ?? before.handle };
        const [clash] = (await m.query(`SELECT id FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND handle = $3`, [
          target.projectId,
          target.accountId,
          target.handle,
        ])) as { id: string }[];
        if (clash) throw await this.handleTaken(target, m);
        await recordRevisions(m, [articleId], null, before.account_id);
        const [after] = (await m.query(
          `WITH u AS (UPDATE articles SET deleted_at = NULL, deleted_by = NULL, handle = $3, version = version + 1, updated_at = now()
                       WHERE id = $1 AND account_id = $2 RETURNING *)
           SELECT * FROM u`,
          [articleId, before.account_id, target.handle],
        )) as Article[];
        return articleView(after);
      });
    } catch (err) {
      // A live article took the handle between the check and the write.
      if (target && isUniqueViolation(err, 'articles_handle_uq')) throw await this.handleTaken(target);
      throw err;
    }
  }

  /** Deletes trashed articles (and their revisions) older than TRASH_DAYS; safe to run on every instance at once. */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const [{ n }] = (await this.db.query(
        `WITH gone AS (
           DELETE FROM articles WHERE id IN (
             SELECT id FROM articles WHERE deleted_at < now() - make_interval(days => $1) ORDER BY deleted_at LIMIT $2 FOR UPDATE SKIP LOCKED
           ) RETURNING 1
         ) SELECT count(*)::int AS n FROM gone`,
        [TRASH_DAYS, PURGE_BATCH],
      )) as { n: number }[];
      purged += n;
      if (n < PURGE_BATCH) return purged;
    }
  }

  private async handleTaken(target: { accountId: string; projectId: string; handle: string }, manager?: EntityManager): Promise<DomainError> {
    const free = await this.articles.freeHandle({ accountId: target.accountId, projectId: target.projectId }, target.handle, manager);
    return new DomainError(
      'handle_taken',
      `The handle "${target.handle}" was taken by a live article meanwhile; "${free}" is free. Restore with {"handle": "${free}"}.`,
      { handle: target.handle, suggestion: free },
    );
  }
}

const notInTrash = (id: string) => new DomainError('not_found', `No article with id "${id}" in the trash.`);

function encodeTrashCursor(deletedAt: string, id: string): string {
  return Buffer.from(`${deletedAt}|${id}`, 'utf8').toString('base64url');
}

function decodeTrashCursor(cursor: string | undefined): { deletedAt: string; id: string } | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  // The deletion time in microseconds since the epoch (exact, unlike a JS Date), then the id.
  const [deletedAt, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (extra !== undefined || !isUuid(id) || !/^[0-9]{1,17}$/.test(deletedAt ?? '')) {
    throw new DomainError('validation_failed', 'The cursor is not one this API returned; start again without it.');
  }
  return { deletedAt, id };
}
