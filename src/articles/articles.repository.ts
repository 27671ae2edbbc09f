import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import DataLoader from 'dataloader';
import type { DataSource } from 'typeorm';
import { isUuid, newId } from '../common/ids.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { affected, row, rows, run, sql, type Queryable } from '../database/sql.js';
import type { ProjectScope } from '../projects/project-scope.js';
import type { Article, ArticleStatus } from './article.entity.js';
import type { TrashedArticle } from './article.views.js';

/** Characters of each body the setup context reads (to tell its language). */
const CONTEXT_BODY_HEAD = 3_000;
/** Live-count lookups sent in one statement at most. */
const LIVE_COUNT_BATCH = 1_000;

/** The columns of a new article, as the article rules checked them. */
export interface ArticleInsert {
  handle: string;
  title: string;
  excerpt: string;
  body: string;
  status: ArticleStatus;
  published_at: Date | null;
  tags: string[];
  source: 'human' | 'ai';
  job_id: string | null;
  agent_config_version: number | null;
}

/** A project of an account whose live articles are counted. */
interface ProjectKey {
  accountId: string;
  projectId: string;
}

/** What the writer's setup context reads of an article. */
export interface ContextSampleRow {
  title: string;
  tags: string[];
  body_head: string;
  word_count: number;
}

const TRASH_COLUMNS = 'id, account_id, project_id, handle, title, excerpt, status, tags, published_at, updated_at, version, deleted_at, deleted_by';

/** An article in the trash, with its deletion time in microseconds since the epoch (the trash listing's cursor). */
export type TrashedRow = TrashedArticle & { cursor_at: string };

type Key = [id: string, accountId: string, projectId: string];

const findById = sql<[accountId: string, projectId: string, id: string], Article>(
  'articles.find_by_id',
  `SELECT * FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND id = $3`,
  { hot: true },
);
const findByHandle = sql<[accountId: string, projectId: string, handle: string], Article>(
  'articles.find_by_handle',
  `SELECT * FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND handle = $3`,
  { hot: true },
);
const findInProjects = sql<[accountId: string, projectIds: string[], id: string], Article>(
  'articles.find_in_projects',
  `SELECT * FROM articles WHERE id = $3 AND account_id = $1 AND project_id = ANY($2::uuid[]) AND deleted_at IS NULL`,
);
const findByJob = sql<[jobId: string, accountId: string], Article>('articles.find_by_job', `SELECT * FROM articles WHERE job_id = $1 AND account_id = $2`);
const lockLive = sql<Key, Article>(
  'articles.lock_live',
  `SELECT * FROM articles WHERE id = $1 AND account_id = $2 AND project_id = $3 AND deleted_at IS NULL FOR UPDATE`,
);
const lockAny = sql<[id: string], Article>('articles.lock_any', `SELECT * FROM articles WHERE id = $1 FOR UPDATE`);

const insert = sql<
  [
    id: string,
    accountId: string,
    projectId: string,
    handle: string,
    title: string,
    excerpt: string,
    body: string,
    status: ArticleStatus,
    publishedAt: Date | null,
    tags: string[],
    source: 'human' | 'ai',
    jobId: string | null,
    agentConfigVersion: number | null,
  ],
  Article
>(
  'articles.insert',
  // ON CONFLICT DO NOTHING keeps a caller's transaction usable when the handle (or the job's article) is taken.
  `INSERT INTO articles (id, account_id, project_id, handle, title, excerpt, body, status, tags, published_at, source, job_id, agent_config_version)
   VALUES ($1, $2, $3, $4, $5, $6, $7,
           CASE WHEN $8 IN ('published', 'scheduled') THEN CASE WHEN $9::timestamptz > now() THEN 'scheduled' ELSE 'published' END ELSE $8 END,
           $10, CASE WHEN $8 IN ('published', 'scheduled') THEN coalesce($9::timestamptz, now()) ELSE $9::timestamptz END, $11, $12, $13)
   ON CONFLICT DO NOTHING RETURNING *`,
);

// The changes of one live article: each bumps version and updated_at (its previous state is a revision already).
// A CTE so TypeORM answers the rows (a bare UPDATE answers [rows, count]).
const updateFields = sql<[...Key, title: string | null, body: string | null, handle: string | null, excerpt: string | null, tags: string[] | null], Article>(
  'articles.update_fields',
  `WITH u AS (UPDATE articles SET title = coalesce($4, title), body = coalesce($5, body), handle = coalesce($6, handle), excerpt = coalesce($7, excerpt), tags = coalesce($8::text[], tags), version = version + 1, updated_at = now() WHERE id = $1 AND account_id = $2 AND project_id = $3 RETURNING *)
   SELECT * FROM u`,
);
const publish = sql<[...Key, publishedAt: Date | null], Article>(
  'articles.publish',
  `WITH u AS (UPDATE articles SET status = CASE WHEN $4::timestamptz > now() THEN 'scheduled' ELSE 'published' END, published_at = coalesce($4::timestamptz, now()), version = version + 1, updated_at = now() WHERE id = $1 AND account_id = $2 AND project_id = $3 RETURNING *)
   SELECT * FROM u`,
);
const trash = sql<[...Key, deletedBy: string | null], Article>(
  'articles.trash',
  `WITH u AS (UPDATE articles SET deleted_at = now(), deleted_by = $4, version = version + 1, updated_at = now() WHERE id = $1 AND account_id = $2 AND project_id = $3 RETURNING *)
   SELECT * FROM u`,
);
const setFeaturedImage = sql<[...Key, mediaId: string], Article>(
  'articles.set_featured_image',
  `WITH u AS (UPDATE articles SET featured_image_id = $4, version = version + 1, updated_at = now() WHERE id = $1 AND account_id = $2 AND project_id = $3 RETURNING *)
   SELECT * FROM u`,
);
const restore = sql<[id: string, accountId: string, handle: string], Article>(
  'articles.restore',
  `WITH u AS (UPDATE articles SET deleted_at = NULL, deleted_by = NULL, handle = $3, version = version + 1, updated_at = now()
               WHERE id = $1 AND account_id = $2 RETURNING *)
   SELECT * FROM u`,
);

// One statement: the DELETE (which cannot see the row the INSERT adds) leaves each article its newest
// `keep - 1` revisions, and the INSERT adds the current state, so no article ever has more than `keep`.
const recordRevisions = sql<[articleIds: string[], credentialId: string | null, revisionIds: string[], accountId: string | null, keep: number]>(
  'articles.record_revisions',
  `WITH pruned AS (
     DELETE FROM article_revisions WHERE id IN (
       SELECT id FROM (
         SELECT id, row_number() OVER (PARTITION BY article_id ORDER BY version DESC) AS newest
           FROM article_revisions WHERE article_id = ANY($1::uuid[]) AND ($4::uuid IS NULL OR account_id = $4)
       ) ranked WHERE newest >= $5
     )
   )
   INSERT INTO article_revisions (id, account_id, article_id, version, snapshot, credential_id, created_at)
   SELECT r.rev_id, a.account_id, a.id, a.version, to_jsonb(a) - 'account_id', $2, now()
     FROM articles a JOIN unnest($1::uuid[], $3::uuid[]) AS r(article_id, rev_id) ON r.article_id = a.id
    WHERE $4::uuid IS NULL OR a.account_id = $4`,
);
const countRevisions = sql<[articleId: string, accountId: string], { n: number }>(
  'articles.count_revisions',
  `SELECT count(*)::int AS n FROM article_revisions WHERE article_id = $1 AND account_id = $2`,
);

const takenHandles = sql<[projectId: string, accountId: string, candidates: string[]], { handle: string }>(
  'articles.taken_handles',
  `SELECT handle FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND handle = ANY($3)`,
);
const handleHolder = sql<[projectId: string, accountId: string, handle: string, exceptId: string], { id: string }>(
  'articles.handle_holder',
  `SELECT id FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND handle = $3 AND id <> $4`,
);

const contextSample = sql<[accountId: string, projectId: string, limit: number], ContextSampleRow>(
  'articles.context_sample',
  `SELECT title, tags, left(body, ${CONTEXT_BODY_HEAD}) AS body_head, word_count
     FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL
    ORDER BY updated_at DESC, id DESC LIMIT $3`,
);
// Each write_article and generate_image call reads it (the setup handshake's cached context).
const contextStamp = sql<[accountId: string, projectId: string], { total: number; generation: string }>(
  'articles.context_stamp',
  `SELECT n::int AS total, generation::text AS generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*'`,
  { hot: true },
);
// Live articles of each (account, project) pair asked; a pair without any has no row.
const liveCounts = sql<[accountIds: string[], projectIds: string[]], { account_id: string; project_id: string; n: number }>(
  'articles.live_counts',
  `SELECT c.account_id, c.project_id, c.n::int AS n FROM unnest($1::uuid[], $2::uuid[]) AS k(account_id, project_id)
     JOIN article_counts c ON c.project_id = k.project_id AND c.status = '*' AND c.account_id = k.account_id`,
  { hot: true, prepared: true },
);

const trashFirst = sql<[accountId: string, projectId: string, limit: number], TrashedRow>(
  'articles.trash_first',
  `SELECT ${TRASH_COLUMNS}, (extract(epoch FROM deleted_at) * 1000000)::bigint::text AS cursor_at FROM articles
    WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NOT NULL
    ORDER BY deleted_at DESC, id DESC LIMIT $3`,
);
// The cursor is exact to the microsecond, which a JS Date is not.
const trashAfter = sql<[accountId: string, projectId: string, limit: number, deletedAtMicros: string, id: string], TrashedRow>(
  'articles.trash_after',
  `SELECT ${TRASH_COLUMNS}, (extract(epoch FROM deleted_at) * 1000000)::bigint::text AS cursor_at FROM articles
    WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NOT NULL AND (deleted_at, id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid)
    ORDER BY deleted_at DESC, id DESC LIMIT $3`,
);
const purgeExpired = sql<[days: number, batch: number], { n: number }>(
  'articles.purge_expired',
  `WITH gone AS (
     DELETE FROM articles WHERE id IN (
       SELECT id FROM articles WHERE deleted_at < now() - make_interval(days => $1) ORDER BY deleted_at LIMIT $2 FOR UPDATE SKIP LOCKED
     ) RETURNING 1
   ) SELECT count(*)::int AS n FROM gone`,
);

const lockDue = sql<[batch: number], { id: string }>(
  'articles.lock_due',
  `SELECT id FROM articles WHERE status = 'scheduled' AND deleted_at IS NULL AND published_at <= now()
    ORDER BY published_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
);
const publishScheduled = sql<[ids: string[]]>(
  'articles.publish_scheduled',
  `UPDATE articles SET status = 'published', version = version + 1, updated_at = now() WHERE id = ANY($1) AND status = 'scheduled'`,
);

/**
 * The statements of `articles`, their revisions (`article_revisions`) and their counts (`article_counts`,
 * kept by a trigger). Methods that may run in a caller's transaction take it last (`db`).
 */
@Injectable()
export class ArticlesRepository {
  /** Revisions kept per article (ARTICLE_REVISIONS_KEPT). */
  readonly revisionsKept: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.revisionsKept = config.articleRevisionsKept;
  }

  /**
   * The live-count lookups made in one turn of the event loop (list_projects, the console's overview),
   * whichever account asked, go to PostgreSQL as one statement after the turn's I/O: one round trip for
   * all of them instead of one each. Nothing is cached: every lookup reads the counts as committed when
   * its statement runs, which is after the lookup was asked for.
   */
  private readonly liveCounts = new DataLoader<ProjectKey, number>((keys) => this.countLiveBatch(keys), {
    cache: false,
    batchScheduleFn: (send) => setImmediate(send),
    maxBatchSize: LIVE_COUNT_BATCH,
  });

  /** A live article of the scope, by id or by handle. */
  find(scope: ProjectScope, by: { id: string } | { handle: string }, db: Queryable = this.db): Promise<Article | null> {
    return 'id' in by ? row(db, findById, [scope.accountId, scope.projectId, by.id]) : row(db, findByHandle, [scope.accountId, scope.projectId, by.handle]);
  }

  /** A live article of the account by id, when it is in one of `projectIds`. */
  findInProjects(accountId: string, projectIds: string[], id: string, db: Queryable = this.db): Promise<Article | null> {
    return row(db, findInProjects, [accountId, projectIds, id]);
  }

  /** The article a job wrote, if any. */
  findByJob(accountId: string, jobId: string, db: Queryable = this.db): Promise<Article | null> {
    return row(db, findByJob, [jobId, accountId]);
  }

  /** Locks a live article of the scope for the caller's transaction. */
  lockLive(scope: ProjectScope, id: string, db: Queryable): Promise<Article | null> {
    return row(db, lockLive, [id, scope.accountId, scope.projectId]);
  }

  /** Locks an article, live or trashed, of any account (an admin's restore). */
  lock(id: string, db: Queryable): Promise<Article | null> {
    return row(db, lockAny, [id]);
  }

  /** Inserts an article; null when its handle (or its job's article) is taken. */
  insert(id: string, scope: ProjectScope, a: ArticleInsert, db: Queryable = this.db): Promise<Article | null> {
    return row(db, insert, [
      id,
      scope.accountId,
      scope.projectId,
      a.handle,
      a.title,
      a.excerpt,
      a.body,
      a.status,
      a.published_at,
      a.tags,
      a.source,
      a.job_id,
      a.agent_config_version,
    ]);
  }

  /** Sets the fields given (null: unchanged). */
  async updateFields(
    scope: ProjectScope,
    id: string,
    f: { title: string | null; body: string | null; handle: string | null; excerpt: string | null; tags: string[] | null },
    db: Queryable,
  ): Promise<Article> {
    return (await row(db, updateFields, [id, scope.accountId, scope.projectId, f.title, f.body, f.handle, f.excerpt, f.tags]))!;
  }

  /** Publishes now, or schedules for a future `publishedAt` (Postgres' clock decides which). */
  async publish(scope: ProjectScope, id: string, publishedAt: Date | null, db: Queryable): Promise<Article> {
    return (await row(db, publish, [id, scope.accountId, scope.projectId, publishedAt]))!;
  }

  /** Moves the article to the trash. */
  async trash(scope: ProjectScope, id: string, deletedBy: string | null, db: Queryable): Promise<Article> {
    return (await row(db, trash, [id, scope.accountId, scope.projectId, deletedBy]))!;
  }

  async setFeaturedImage(scope: ProjectScope, id: string, mediaId: string, db: Queryable): Promise<Article> {
    return (await row(db, setFeaturedImage, [id, scope.accountId, scope.projectId, mediaId]))!;
  }

  /** Takes a trashed article out of the trash, under `handle`. */
  async restore(accountId: string, id: string, handle: string, db: Queryable): Promise<Article> {
    return (await row(db, restore, [id, accountId, handle]))!;
  }

  /**
   * Keeps the current state of `articleIds` as revisions, inside the caller's transaction (which holds
   * their row locks), and deletes what is beyond the newest {@link revisionsKept} of each in the same
   * statement. `accountId` limits it to one tenant; only system tasks (the scheduler) give null.
   */
  async recordRevisions(articleIds: string[], credentialId: string | null, accountId: string | null, db: Queryable): Promise<void> {
    await run(db, recordRevisions, [articleIds, credentialId, articleIds.map(() => newId()), accountId, this.revisionsKept]);
  }

  /** How many revisions of an article of the account are stored. */
  async countRevisions(accountId: string, articleId: string, db: Queryable = this.db): Promise<number> {
    return (await row(db, countRevisions, [articleId, accountId]))!.n;
  }

  /** Which of `candidates` live articles of the scope hold. */
  async takenHandles(scope: ProjectScope, candidates: string[], db: Queryable = this.db): Promise<Set<string>> {
    return new Set((await rows(db, takenHandles, [scope.projectId, scope.accountId, candidates])).map((r) => r.handle));
  }

  /** Whether a live article of the scope other than `exceptId` holds `handle`. */
  async handleHeld(scope: ProjectScope, handle: string, exceptId: string, db: Queryable = this.db): Promise<boolean> {
    return (await row(db, handleHolder, [scope.projectId, scope.accountId, handle, exceptId])) !== null;
  }

  /**
   * The most recently updated live articles of a project: title, tags, the start of the body and its
   * stored word count. Bounded: a slice of each body (TOAST reads only the chunks it needs).
   */
  contextSample(scope: ProjectScope, limit: number, db: Queryable = this.db): Promise<ContextSampleRow[]> {
    return rows(db, contextSample, [scope.accountId, scope.projectId, limit]);
  }

  /** The project's live article count and generation (null: it never had an article). */
  contextStamp(scope: ProjectScope, db: Queryable = this.db): Promise<{ total: number; generation: string } | null> {
    return row(db, contextStamp, [scope.accountId, scope.projectId]);
  }

  /** Live articles in each of the projects given (of one account), in their order; 0 for a project without any. */
  countLive(accountId: string, projectIds: string[]): Promise<number[]> {
    return Promise.all(projectIds.map((projectId) => this.liveCounts.load({ accountId, projectId })));
  }

  private async countLiveBatch(keys: readonly ProjectKey[]): Promise<number[]> {
    // An id that is not a UUID has no articles; left in, it would fail the statement of every lookup batched with it.
    const asked = keys.filter((k) => isUuid(k.accountId) && isUuid(k.projectId));
    const found = new Map<string, number>();
    if (asked.length > 0) {
      const counted = await rows(this.db, liveCounts, [asked.map((k) => k.accountId), asked.map((k) => k.projectId)]);
      for (const r of counted) found.set(`${r.account_id} ${r.project_id}`, r.n);
    }
    return keys.map((k) => found.get(`${k.accountId} ${k.projectId}`) ?? 0);
  }

  /** Up to `limit` trashed articles of a project, newest deletion first, after the cursor's position when given. */
  trashPage(accountId: string, projectId: string, limit: number, after?: { deletedAt: string; id: string }, db: Queryable = this.db): Promise<TrashedRow[]> {
    return after ? rows(db, trashAfter, [accountId, projectId, limit, after.deletedAt, after.id]) : rows(db, trashFirst, [accountId, projectId, limit]);
  }

  /** Deletes up to `batch` articles trashed more than `days` ago (and their revisions); answers how many. */
  async purgeExpired(days: number, batch: number, db: Queryable = this.db): Promise<number> {
    return (await row(db, purgeExpired, [days, batch]))!.n;
  }

  /** Locks up to `batch` scheduled articles whose time has come, skipping those another instance holds. */
  async lockDue(batch: number, db: Queryable): Promise<string[]> {
    return (await rows(db, lockDue, [batch])).map((r) => r.id);
  }

  /** Publishes the scheduled articles among `ids`; answers how many. */
  publishScheduled(ids: string[], db: Queryable): Promise<number> {
    return affected(db, publishScheduled, [ids]);
  }
}

const UNIQUE_VIOLATION = '23505';

/** Whether a write failed because a live article of the project holds the handle (the partial unique index). */
export function isHandleClash(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  return (e.code ?? e.driverError?.code) === UNIQUE_VIOLATION && (e.constraint ?? e.driverError?.constraint) === 'articles_handle_uq';
}
