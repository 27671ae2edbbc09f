import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Article, ArticleStatus } from './article.entity.js';
import { articleSummary, type ArticleSummary } from './article.views.js';

/** Which project of which account an operation acts on; every query filters by both. */
export interface ProjectScope {
  accountId: string;
  projectId: string;
}

export interface ListArticlesQuery {
  page: number;
  page_size: number;
  status?: ArticleStatus;
  search?: string;
  tag?: string;
}

export interface ArticleListing {
  items: ArticleSummary[];
  /** `total_capped`: a search or tag filter matched more than SEARCH_TOTAL_CAP articles, and `total` is that cap. */
  pagination: { total: number; page: number; page_size: number; pages: number; total_capped?: true };
}

/** Every ANCHOR_EVERY-th row of a listing is remembered, so a deep page seeks to it instead of skipping rows. */
export const ANCHOR_EVERY = 256;
const MAX_ANCHOR_SETS = 1_000;
/** Search and tag totals are exact up to this many matches; beyond, the total says this and `total_capped`. */
export const SEARCH_TOTAL_CAP = 10_000;
/** Up to this offset a page reads its rows directly; beyond, ids first (deferred join). */
const DIRECT_MAX_OFFSET = 64;
/** A refresh of one listing's anchors costs one pass over its index: at most one a second, and ≤ 5% of the time. */
const REFRESH_MIN_INTERVAL_MS = 1_000;
const REFRESH_MAX_SHARE = 0.05;

/** Keyset positions of one listing (a project, optionally one status), valid for one generation of the project. */
interface AnchorSet {
  generation: string;
  /** anchors[j] is the row at position (j + 1) × ANCHOR_EVERY (0-based) in listing order. */
  anchors: { updatedAt: string; id: string }[];
}

interface Refresh {
  startedAt: number;
  tookMs: number;
  running?: Promise<void>;
}

type Row = Article & { total: number; generation: string | null };

interface Page {
  rows: Row[];
  total: number;
  /** The total is SEARCH_TOTAL_CAP and there are more matches. */
  capped?: boolean;
}

/** A page whose rows carry the total (the statements of the unfiltered and status listings). */
const counted = (rows: Row[]): Page => ({ rows, total: rows.length ? Number(rows[0].total ?? 0) : 0 });

const COLUMNS = 'a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version';

/**
 * `list_articles` at scale:
 * - the total comes from `article_counts` (kept by a trigger in the writes' transactions), read in the same
 *   prepared statement as the page, never by counting the project;
 * - a near page reads its rows directly on the listing index; a far one is a deferred join: its ids come
 *   from the covering index `(project_id[, status], updated_at, id)` (index-only), then only its rows are read;
 * - a deep page starts from the nearest remembered keyset anchor (`(updated_at, id) <= anchor`), so page 4000
 *   skips at most ANCHOR_EVERY index entries instead of 80,000. Anchors belong to one generation of the
 *   project (bumped by every write, by the same trigger); the statement returns the generation it saw, and a
 *   page read with anchors of another generation is read again without them;
 * - search and tag filters use the trigram and tag GIN indexes (or the listing index, for common matches);
 *   their totals are counted, up to SEARCH_TOTAL_CAP.
 */
@Injectable()
export class ArticleListingService {
  private readonly log = new Logger(ArticleListingService.name);
  private readonly anchorSets = new Map<string, AnchorSet>();
  private readonly refreshes = new Map<string, Refresh>();
  /** Names of the prepared statements, by SQL text (a handful: one per shape of query). */
  private readonly statementNames = new Map<string, string>();

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async list(scope: ProjectScope, q: ListArticlesQuery): Promise<ArticleListing> {
    const offset = (q.page - 1) * q.page_size;
    const { rows, total, capped } = q.search !== undefined || q.tag !== undefined ? await this.filtered(scope, q, offset) : await this.byStatus(scope, q, offset);
    return {
      items: rows.filter((r) => r.id !== null).map(articleSummary),
      pagination: { total, page: q.page, page_size: q.page_size, pages: Math.ceil(total / q.page_size), ...(capped ? { total_capped: true } : {}) },
    };
  }

  /** Live articles per project, for the projects given (of one account). */
  async countByProject(accountId: string, projectIds: string[]): Promise<Map<string, number>> {
    const rows = (await this.db.query(`SELECT project_id, n::int AS n FROM article_counts WHERE account_id = $1 AND project_id = ANY($2) AND status = '*'`, [
      accountId,
      projectIds,
    ])) as { project_id: string; n: number }[];
    return new Map(rows.map((r) => [r.project_id, r.n]));
  }

  private async byStatus(scope: ProjectScope, q: ListArticlesQuery, offset: number): Promise<Page> {
    const key = `${scope.projectId}|${q.status ?? '*'}`;
    const set = offset >= ANCHOR_EVERY ? this.anchorSets.get(key) : undefined;
    if (set && set.anchors.length) {
      const j = Math.min(Math.floor(offset / ANCHOR_EVERY), set.anchors.length) - 1;
      const anchor = set.anchors[j];
      const rows = await this.pageByStatus(scope, q, offset - (j + 1) * ANCHOR_EVERY, anchor);
      if (rows[0]?.generation === set.generation) return counted(rows);
    }
    const rows = await this.pageByStatus(scope, q, offset);
    if (offset >= ANCHOR_EVERY && rows[0]?.generation) this.refreshAnchors(key, scope, q.status);
    return counted(rows);
  }

  private async pageByStatus(scope: ProjectScope, q: ListArticlesQuery, offset: number, anchor?: { updatedAt: string; id: string }): Promise<Row[]> {
    const params: unknown[] = [scope.accountId, scope.projectId, q.status ?? '*', q.page_size, offset];
    const where = ['project_id = $2', 'deleted_at IS NULL'];
    if (q.status) where.push('status = $3');
    if (anchor) {
      params.push(anchor.updatedAt, anchor.id);
      where.push('(updated_at, id) <= ($6::timestamptz, $7::uuid)');
    }
    const counts = `(SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
         (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation`;
    // A near page reads its rows directly; a far one first finds its ids on the covering index (index-only,
    // so it filters by project only: a project belongs to one account, and the join filters by account too).
    const rows = await this.prepared<Row>(
      offset <= DIRECT_MAX_OFFSET
        ? `SELECT ${counts}, ${COLUMNS} FROM articles a WHERE a.account_id = $1 AND ${where.join(' AND ')}
            ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5`
        : `SELECT ${counts}, ${COLUMNS}
             FROM (SELECT id, updated_at FROM articles WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5) p
             JOIN articles a ON a.id = p.id AND a.account_id = $1
            ORDER BY p.updated_at DESC, p.id DESC`,
      params,
    );
    if (rows.length) return rows;
    // Past the last page (or an empty project): the total still comes from the counts.
    return this.prepared<Row>(`SELECT ${counts}, NULL AS id`, params.slice(0, 3));
  }

  /** A statement of the listing, prepared once per connection (named): parsing it again is most of its cost. */
  private async prepared<T>(text: string, values: unknown[]): Promise<T[]> {
    // TypeORM's query() cannot name a statement; its pg pool (driver.master) can.
    const pool = (this.db.driver as unknown as { master?: { query(config: object): Promise<{ rows: T[] }> } }).master;
    if (!pool) return this.db.query(text, values) as Promise<T[]>;
    let name = this.statementNames.get(text);
    if (!name) {
      name = `articles_list_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
      this.statementNames.set(text, name);
    }
    return (await pool.query({ name, text, values })).rows;
  }

  /**
   * Search and tag: the page and a bounded count run side by side. The page lets the planner choose between
   * the GIN indexes (rare matches) and walking the listing index until the page is full (common ones); the
   * count stops after SEARCH_TOTAL_CAP matches, so no search costs more than that many rows to count.
   */
  private async filtered(scope: ProjectScope, q: ListArticlesQuery, offset: number): Promise<Page> {
    const params: unknown[] = [scope.accountId, scope.projectId];
    const where = ['account_id = $1', 'project_id = $2', 'deleted_at IS NULL'];
    if (q.status) {
      params.push(q.status);
      where.push(`status = $${params.length}`);
    }
    if (q.search !== undefined) {
      // Both sides lower-case and LIKE-escaped, so the pg_trgm GIN indexes on lower(title) and handle answer it.
      params.push(`%${q.search.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`);
      where.push(`(lower(title) LIKE $${params.length} OR handle LIKE $${params.length})`);
    }
    if (q.tag !== undefined) {
      params.push([q.tag]);
      where.push(`tags @> $${params.length}::text[]`);
    }
    const filter = where.join(' AND ');
    const n = params.length;
    const [rows, [{ counted }]] = await Promise.all([
      this.db.query(
        `SELECT ${COLUMNS} FROM articles a WHERE ${filter} ORDER BY updated_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, q.page_size, offset],
      ) as Promise<Row[]>,
      this.db.query(`SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE ${filter} LIMIT $${n + 1}) m`, [...params, SEARCH_TOTAL_CAP + 1]) as Promise<
        { counted: number }[]
      >,
    ]);
    return { rows, total: Math.min(counted, SEARCH_TOTAL_CAP), capped: counted > SEARCH_TOTAL_CAP };
  }

  /** Recomputes a listing's anchors in the background, in one statement (one snapshot with its generation). */
  private refreshAnchors(key: string, scope: ProjectScope, status: ArticleStatus | undefined): void {
    const now = Date.now();
    const last = this.refreshes.get(key);
    if (last && (last.running || now - last.startedAt < Math.max(REFRESH_MIN_INTERVAL_MS, last.tookMs / REFRESH_MAX_SHARE))) return;
    const refresh: Refresh = { startedAt: now, tookMs: 0 };
    refresh.running = (async () => {
      const params: unknown[] = [scope.accountId, scope.projectId, ANCHOR_EVERY];
      if (status) params.push(status);
      const rows = (await this.db.query(
        `WITH r AS (
           SELECT updated_at, id, row_number() OVER (ORDER BY updated_at DESC, id DESC) AS rn
             FROM articles WHERE project_id = $2 AND deleted_at IS NULL ${status ? 'AND status = $4' : ''}
         )
         SELECT (SELECT generation::text FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*') AS generation,
                r.updated_at::text AS updated_at, r.id
           FROM (SELECT 1) one LEFT JOIN r ON r.rn % $3 = 1 AND r.rn > 1
          ORDER BY r.rn`,
        params,
      )) as { generation: string | null; updated_at: string | null; id: string | null }[];
      const generation = rows[0]?.generation;
      if (!generation) return;
      this.anchorSets.delete(key);
      if (this.anchorSets.size >= MAX_ANCHOR_SETS) this.anchorSets.delete(this.anchorSets.keys().next().value!);
      this.anchorSets.set(key, { generation, anchors: rows.filter((r) => r.id !== null).map((r) => ({ updatedAt: r.updated_at!, id: r.id! })) });
    })()
      .catch((err: Error) => this.log.warn(`Could not refresh the listing anchors of ${key}: ${err.message}`))
      .finally(() => {
        refresh.tookMs = Date.now() - refresh.startedAt;
        refresh.running = undefined;
      });
    this.refreshes.delete(key);
    if (this.refreshes.size >= MAX_ANCHOR_SETS) this.refreshes.delete(this.refreshes.keys().next().value!);
    this.refreshes.set(key, refresh);
  }
}
