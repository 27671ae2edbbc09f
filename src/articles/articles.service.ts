import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { isUuid, newId } from '../common/ids.js';
import { ArticleListingService, type ArticleListing, type ListArticlesQuery, type ProjectScope } from './article-listing.service.js';
import { checkArticleFields, type ArticleFields } from './article-rules.js';
import type { Article, ArticleStatus } from './article.entity.js';
import { articleView, type ArticleView } from './article.views.js';
import { handleCandidates, handleFromTitle } from './handles.js';

export type { ArticleListing, ListArticlesQuery, ProjectScope } from './article-listing.service.js';

export interface NewArticle {
  title: string;
  body?: string;
  handle?: string;
  excerpt?: string;
  tags?: string[];
  status?: ArticleStatus;
  /** With status published: a future time schedules the article instead. */
  published_at?: Date | null;
  source?: 'human' | 'ai';
  job_id?: string | null;
  agent_config_version?: number | null;
}

/** Who makes a change: the credential is kept on the revision (null for the system or an admin). */
export interface Actor {
  credentialId: string | null;
}

const UNIQUE_VIOLATION = '23505';
/** Candidates probed per query when looking for a free handle. */
const HANDLE_BATCH = 20;
/** Beyond this many suffixes something is wrong (or someone is filling a project with one title). */
const HANDLE_SUFFIX_LIMIT = 10_000;

/** Characters of each body the setup context reads (to tell its language). */
const CONTEXT_BODY_HEAD = 3_000;

const notFound = (id: string) => new DomainError('not_found', `No article with id "${id}" in this project.`);

/**
 * Articles of a project: reads, and writes that lose nothing. Every change of an existing article
 * (update, publish, delete, scheduler, restore) runs in one transaction that locks the row, keeps
 * its previous state as a revision (with the credential and time) and bumps `version`. Handles are
 * unique among a project's live articles (a partial unique index), so races end in a clean clash.
 */
@Injectable()
export class ArticlesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly listing: ArticleListingService,
  ) {}

  list(scope: ProjectScope, q: ListArticlesQuery): Promise<ArticleListing> {
    return this.listing.list(scope, q);
  }

  /** Live articles per project, for the projects given (of one account). */
  countByProject(accountId: string, projectIds: string[]): Promise<Map<string, number>> {
    return this.listing.countByProject(accountId, projectIds);
  }

  async get(scope: ProjectScope, by: { id?: string; handle?: string }): Promise<ArticleView> {
    // An id that is not a UUID names no article, like any other unknown id.
    const article = by.id !== undefined && !isUuid(by.id) ? null : await this.find(this.db.manager, scope, by);
    if (!article) {
      throw by.id !== undefined ? notFound(by.id) : new DomainError('not_found', `No article with handle "${by.handle}" in this project.`);
    }
    return articleView(article);
  }

  async find(manager: EntityManager, scope: ProjectScope, by: { id?: string; handle?: string }): Promise<Article | null> {
    const [row] = (await manager.query(
      `SELECT * FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND ${by.id !== undefined ? 'id = $3' : 'handle = $3'}`,
      [scope.accountId, scope.projectId, by.id ?? by.handle],
    )) as Article[];
    return row ?? null;
  }

  /**
   * A new article. Without a handle one is derived from the title, taking `-2`, `-3`... when taken;
   * an explicit handle that is taken is a `handle_taken` error naming a free one.
   */
  async create(scope: ProjectScope, input: NewArticle): Promise<ArticleView> {
    return articleView(await this.insertArticle(this.db.manager, scope, input));
  }

  /**
   * Creates an article inside the caller's transaction (an AI job commits it with the job's
   * success). A derived handle takes the first free suffix; an article already written by the
   * same job is returned instead of a second one.
   */
  async createInTransaction(manager: EntityManager, scope: ProjectScope, input: NewArticle & { job_id: string }): Promise<ArticleView> {
    const [existing] = (await manager.query(`SELECT * FROM articles WHERE job_id = $1 AND account_id = $2`, [input.job_id, scope.accountId])) as Article[];
    if (existing) return articleView(existing);
    return articleView(await this.insertArticle(manager, scope, { source: 'ai', ...input }));
  }

  async update(scope: ProjectScope, id: string, version: number, fields: ArticleFields, actor: Actor): Promise<ArticleView> {
    const changes = checkArticleFields(fields);
    if (Object.values(changes).every((v) => v === undefined)) {
      throw new DomainError('invalid_arguments', 'Nothing to update: give at least one of title, body, handle, excerpt or tags.');
    }
    return this.withHandleClash(scope, changes.handle, () =>
      this.change(scope, id, actor, async (m, before) => {
        if (before.version !== version) {
          throw new DomainError(
            'version_conflict',
            `The article "${id}" is at version ${before.version}, not ${version}: it changed since you read it. Read it again with get_article and retry with version ${before.version}.`,
            { current_version: before.version },
          );
        }
        if (changes.handle !== undefined && changes.handle !== before.handle) await this.assertHandleFree(m, scope, changes.handle, id);
        return `title = coalesce($4, title), body = coalesce($5, body), handle = coalesce($6, handle), excerpt = coalesce($7, excerpt), tags = coalesce($8::text[], tags)`;
      }, [changes.title ?? null, changes.body ?? null, changes.handle ?? null, changes.excerpt ?? null, changes.tags ?? null]),
    );
  }

  /**
   * Publishes now, or schedules for a future `publishedAt` (Postgres' clock decides which). An article
   * already published stays as it is when no time is given.
   */
  async publish(scope: ProjectScope, id: string, publishedAt: Date | undefined, actor: Actor): Promise<ArticleView> {
    return this.change(scope, id, actor, async (_m, before) => {
      if (publishedAt === undefined && before.status === 'published') return null;
      return `status = CASE WHEN $4::timestamptz > now() THEN 'scheduled' ELSE 'published' END, published_at = coalesce($4::timestamptz, now())`;
    }, [publishedAt ?? null]);
  }

  /** Moves an article to the trash (restorable by an admin for 30 days); its handle becomes free. */
  async delete(scope: ProjectScope, id: string, actor: Actor): Promise<{ deleted: true; id: string }> {
    await this.change(scope, id, actor, async () => `deleted_at = now(), deleted_by = $4`, [actor.credentialId]);
    return { deleted: true, id };
  }

  /**
   * The most recently updated live articles of a project, for the writer's setup context: title,
   * tags, the start of the body and its stored word count (AI jobs, src/agents). Bounded data: a
   * slice of each body (TOAST reads only the chunks it needs) and an integer, however large the bodies.
   */
  async contextSample(scope: ProjectScope, limit: number): Promise<{ title: string; tags: string[]; body_head: string; word_count: number }[]> {
    return (await this.db.query(
      `SELECT title, tags, left(body, ${CONTEXT_BODY_HEAD}) AS body_head, word_count
         FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL
        ORDER BY updated_at DESC, id DESC LIMIT $3`,
      [scope.accountId, scope.projectId, limit],
    )) as { title: string; tags: string[]; body_head: string; word_count: number }[];
  }

  /**
   * The project's live article count and its generation, which every write touching a live article
   * bumps in the write's own transaction (the article_counts trigger): what was computed from the
   * project's articles at one generation still holds while the generation is the same, on any instance.
   * Generation null: the project never had an article.
   */
  async contextStamp(scope: ProjectScope): Promise<{ total: number; generation: string | null }> {
    const [row] = (await this.db.query(`SELECT n::int AS total, generation::text AS generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*'`, [
      scope.accountId,
      scope.projectId,
    ])) as { total: number; generation: string }[];
    return row ?? { total: 0, generation: null };
  }

  /**
   * Sets an article's featured image inside the caller's transaction (with the image's insert),
   * keeping the previous state as a revision and bumping the version. Null when the article is gone.
   */
  async setFeaturedImage(manager: EntityManager, scope: ProjectScope, articleId: string, mediaId: string, credentialId: string | null): Promise<ArticleView | null> {
    const before = await this.lockLive(manager, scope, articleId);
    if (!before) return null;
    return articleView(await this.applyChange(manager, scope, before, { credentialId }, `featured_image_id = $4`, [mediaId]));
  }

  /** `handle`, or `handle-2`, `handle-3`... whichever is free first among the project's live articles. */
  async freeHandle(scope: ProjectScope, handle: string, manager: EntityManager = this.db.manager): Promise<string> {
    for (let from = 1; from <= HANDLE_SUFFIX_LIMIT; from += HANDLE_BATCH) {
      const candidates = handleCandidates(handle, from, HANDLE_BATCH);
      const taken = await this.takenHandles(manager, scope, candidates);
      const free = candidates.find((c) => !taken.has(c));
      if (free) return free;
    }
    throw new DomainError('conflict', `No free handle is left for "${handle}" in this project; choose another handle.`);
  }

  /**
   * Locks a live article of the scope, lets `decide` check it and name the columns to set (null: no
   * change), then keeps the previous state as a revision and applies the change — one transaction.
   */
  private async change(
    scope: ProjectScope,
    id: string,
    actor: Actor,
    decide: (m: EntityManager, before: Article) => Promise<string | null>,
    params: unknown[],
  ): Promise<ArticleView> {
    if (!isUuid(id)) throw notFound(id);
    return this.db.transaction(async (m) => {
      const before = await this.lockLive(m, scope, id);
      if (!before) throw notFound(id);
      const set = await decide(m, before);
      return articleView(set === null ? before : await this.applyChange(m, scope, before, actor, set, params));
    });
  }

  private async lockLive(manager: EntityManager, scope: ProjectScope, id: string): Promise<Article | null> {
    const [row] = (await manager.query(`SELECT * FROM articles WHERE id = $1 AND account_id = $2 AND project_id = $3 AND deleted_at IS NULL FOR UPDATE`, [
      id,
      scope.accountId,
      scope.projectId,
    ])) as Article[];
    return row ?? null;
  }

  /** Keeps `before` as a revision, then sets `set` (whose parameters start at $4), bumping version and updated_at. */
  private async applyChange(manager: EntityManager, scope: ProjectScope, before: Article, actor: Actor, set: string, params: unknown[]): Promise<Article> {
    await recordRevisions(manager, [before.id], actor.credentialId, scope.accountId);
    const [after] = (await manager.query(
      // A CTE so the driver answers rows (a bare UPDATE answers [rows, count]).
      `WITH u AS (UPDATE articles SET ${set}, version = version + 1, updated_at = now() WHERE id = $1 AND account_id = $2 AND project_id = $3 RETURNING *)
       SELECT * FROM u`,
      [before.id, scope.accountId, scope.projectId, ...params],
    )) as Article[];
    return after;
  }

  private async insertArticle(manager: EntityManager, scope: ProjectScope, input: NewArticle): Promise<Article> {
    const fields = checkArticleFields(input);
    const status = fields.status ?? 'draft';
    const publishes = status === 'published' || status === 'scheduled';
    if (fields.published_at != null && !publishes && status !== 'archived') {
      throw new DomainError(
        'invalid_arguments',
        'Invalid value for "published_at": it applies only with status "published" (a future time schedules the article). Set status to "published", or leave published_at out.',
      );
    }
    const insert = (handle: string) =>
      manager.query(
        // ON CONFLICT DO NOTHING keeps a caller's transaction usable when the handle (or the job's article) is taken.
        `INSERT INTO articles (id, account_id, project_id, handle, title, excerpt, body, status, tags, published_at, source, job_id, agent_config_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7,
                 CASE WHEN $8 IN ('published', 'scheduled') THEN CASE WHEN $9::timestamptz > now() THEN 'scheduled' ELSE 'published' END ELSE $8 END,
                 $10, CASE WHEN $8 IN ('published', 'scheduled') THEN coalesce($9::timestamptz, now()) ELSE $9::timestamptz END, $11, $12, $13)
         ON CONFLICT DO NOTHING RETURNING *`,
        [
          newId(),
          scope.accountId,
          scope.projectId,
          handle,
          fields.title,
          fields.excerpt ?? '',
          fields.body ?? '',
          status,
          fields.published_at ?? null,
          fields.tags ?? [],
          fields.source ?? 'human',
          fields.job_id ?? null,
          fields.agent_config_version ?? null,
        ],
      ) as Promise<Article[]>;

    if (fields.handle !== undefined) {
      const [created] = await insert(fields.handle);
      if (created) return created;
      throw await this.handleTaken(scope, fields.handle, manager);
    }
    // Probe a batch of candidates, then insert the first free one; a concurrent create may take it first,
    // in which case the insert does nothing and the next candidate is tried.
    const base = handleFromTitle(fields.title);
    for (let from = 1; from <= HANDLE_SUFFIX_LIMIT; from += HANDLE_BATCH) {
      const candidates = handleCandidates(base, from, HANDLE_BATCH);
      const taken = await this.takenHandles(manager, scope, candidates);
      for (const handle of candidates) {
        if (taken.has(handle)) continue;
        const [created] = await insert(handle);
        if (created) return created;
        if (fields.job_id) {
          const [byJob] = (await manager.query(`SELECT * FROM articles WHERE job_id = $1 AND account_id = $2`, [fields.job_id, scope.accountId])) as Article[];
          if (byJob) return byJob;
        }
      }
    }
    throw new DomainError('conflict', `No free handle is left for "${base}" in this project; give an explicit handle.`);
  }

  private async takenHandles(manager: EntityManager, scope: ProjectScope, candidates: string[]): Promise<Set<string>> {
    const rows = (await manager.query(`SELECT handle FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND handle = ANY($3)`, [
      scope.projectId,
      scope.accountId,
      candidates,
    ])) as { handle: string }[];
    return new Set(rows.map((r) => r.handle));
  }

  private async assertHandleFree(manager: EntityManager, scope: ProjectScope, handle: string, exceptId: string): Promise<void> {
    const [row] = (await manager.query(`SELECT id FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND handle = $3 AND id <> $4`, [
      scope.projectId,
      scope.accountId,
      handle,
      exceptId,
    ])) as { id: string }[];
    if (row) throw await this.handleTaken(scope, handle, manager);
  }

  private async handleTaken(scope: ProjectScope, handle: string, manager?: EntityManager): Promise<DomainError> {
    const free = await this.freeHandle(scope, handle, manager);
    return new DomainError(
      'handle_taken',
      `The handle "${handle}" is already used by another article in this project; "${free}" is free. Retry with handle "${free}", or leave handle out to derive one from the title.`,
      { handle, suggestion: free },
    );
  }

  /** A concurrent writer may take a handle between the check and the write: the unique index decides. */
  private async withHandleClash<T>(scope: ProjectScope, handle: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (handle !== undefined && isUniqueViolation(err, 'articles_handle_uq')) throw await this.handleTaken(scope, handle);
      throw err;
    }
  }
}

/**
 * Keeps the current state of `articleIds` as revisions, inside the caller's transaction (which holds
 * their row locks). `accountId` limits it to one tenant; only system tasks (the scheduler) omit it.
 */
export async function recordRevisions(manager: EntityManager, articleIds: string[], credentialId: string | null, accountId?: string): Promise<void> {
  await manager.query(
    `INSERT INTO article_revisions (id, account_id, article_id, version, snapshot, credential_id, created_at)
     SELECT r.rev_id, a.account_id, a.id, a.version, to_jsonb(a) - 'account_id', $2, now()
       FROM articles a JOIN unnest($1::uuid[], $3::uuid[]) AS r(article_id, rev_id) ON r.article_id = a.id
      WHERE $4::uuid IS NULL OR a.account_id = $4`,
    [articleIds, credentialId, articleIds.map(() => newId()), accountId ?? null],
  );
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e.code ?? e.driverError?.code;
  const name = e.constraint ?? e.driverError?.constraint;
  return code === UNIQUE_VIOLATION && (!constraint || name === constraint);
}
