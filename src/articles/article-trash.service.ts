import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { isUuid } from '../common/ids.js';
import type { Page } from '../common/pagination.js';
import { ProjectsService } from '../projects/projects.service.js';
import { checkArticleFields } from './article-rules.js';
import { articleView, TRASH_DAYS, trashedView, type ArticleView, type TrashedArticleView } from './article.views.js';
import { ArticlesRepository, isHandleClash } from './articles.repository.js';
import { ArticlesService } from './articles.service.js';

/** Trashed rows purged per statement, so a large purge never holds many locks at once. */
const PURGE_BATCH = 500;

/**
 * The trash of deleted articles, for admins: listed per project (newest deletion first), restorable,
 * and purged once older than {@link TRASH_DAYS} days by Postgres' clock.
 */
@Injectable()
export class ArticleTrashService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly repository: ArticlesRepository,
    private readonly articles: ArticlesService,
    private readonly projects: ProjectsService,
  ) {}

  async list(projectId: string, limit = 50, cursor?: string): Promise<Page<TrashedArticleView>> {
    const project = await this.projects.get(projectId);
    const rows = await this.repository.trashPage(project.account_id, projectId, limit + 1, decodeTrashCursor(cursor));
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
        const before = await this.repository.lock(articleId, m);
        if (!before) throw notInTrash(articleId);
        if (before.deleted_at === null) throw new DomainError('invalid_state', `The article "${articleId}" is not in the trash; it is live.`);
        target = { accountId: before.account_id, projectId: before.project_id, handle: handle ?? before.handle };
        // The article itself is in the trash, so it holds no live handle.
        if (await this.repository.handleHeld(target, target.handle, articleId, m)) throw await this.handleTaken(target, m);
        await this.repository.recordRevisions([articleId], null, before.account_id, m);
        return articleView(await this.repository.restore(before.account_id, articleId, target.handle, m));
      });
    } catch (err) {
      // A live article took the handle between the check and the write.
      if (target && isHandleClash(err)) throw await this.handleTaken(target);
      throw err;
    }
  }

  /** Deletes trashed articles (and their revisions) older than TRASH_DAYS; safe to run on every instance at once. */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const n = await this.repository.purgeExpired(TRASH_DAYS, PURGE_BATCH);
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
