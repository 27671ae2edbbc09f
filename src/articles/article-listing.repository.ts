import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, rows, sql, type Sql } from '../database/sql.js';
import type { ProjectScope } from '../projects/project-scope.js';
import type { ArticleStatus } from './article.entity.js';
import type { ArticleSummaryRow } from './article.views.js';

/** What the page statements answer: the listing's total and the project's generation on each row. */
type Counts = { total: number | null; generation: string | null };
type CountedRow = ArticleSummaryRow & Counts;

/** A page of the unfiltered or status listing. */
export interface ListingPage {
  rows: ArticleSummaryRow[];
  total: number;
  /** The project's generation the page was read at; null: the project never had an article. */
  generation: string | null;
}

/** A keyset position in listing order. */
export interface Anchor {
  updatedAt: string;
  id: string;
}

type PageParams =
  | [accountId: string, projectId: string, status: ArticleStatus | '*', limit: number, offset: number]
  | [accountId: string, projectId: string, status: ArticleStatus | '*', limit: number, offset: number, anchorUpdatedAt: string, anchorId: string];

/** The filters of a search or tag listing, in the order their parameters follow `$1` (account) and `$2` (project). */
export interface ListingFilter {
  status?: ArticleStatus;
  /** A LIKE pattern, lower-case. */
  like?: string;
  tag?: string;
}

/** A filtered listing's parameters: account, project, then its filters' values, then limit and offset (the page) or the cap (the count). */
type FilterParams = readonly (string | string[] | number)[];

const COLUMNS = 'a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version';
// Continued at the statements' indentation below, so that the snapshot reads as one block.
const COUNTS = `(SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
             (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation`;

const flags = (...named: [boolean, string][]) => named.map(([on, name]) => (on ? `_${name}` : '')).join('');

/**
 * A page of the unfiltered or status listing, with its total and generation. A near page reads its rows
 * directly; a far one first finds its ids on the covering index (index-only, so it filters by project
 * only: a project belongs to one account, and the join filters by account too). Prepared once per
 * connection: parsing it again is most of its cost.
 */
function pageStatement(deferred: boolean, byStatus: boolean, anchored: boolean): Sql<PageParams, CountedRow> {
  const where = ['project_id = $2', 'deleted_at IS NULL'];
  if (byStatus) where.push('status = $3');
  if (anchored) where.push('(updated_at, id) <= ($6::timestamptz, $7::uuid)');
  const filter = where.join(' AND ');
  const text = deferred
    ? `
      SELECT ${COUNTS},
             ${COLUMNS}
      FROM (SELECT id, updated_at FROM articles WHERE ${filter} ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5) p
      JOIN articles a ON a.id = p.id AND a.account_id = $1
      ORDER BY p.updated_at DESC, p.id DESC`
    : `
      SELECT ${COUNTS},
             ${COLUMNS}
      FROM articles a
      WHERE a.account_id = $1 AND ${filter}
      ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5`;
  const name = `articles.list_${deferred ? 'deferred' : 'direct'}${flags([byStatus, 'by_status'], [anchored, 'from_anchor'])}`;
  return sql<PageParams, CountedRow>(name, text, { hot: true, prepared: true });
}

// Every variant built once, here, so that the snapshot shows them all.
const PAGES = new Map<string, Sql<PageParams, CountedRow>>();
for (const deferred of [false, true]) {
  for (const byStatus of [false, true])
    for (const anchored of [false, true]) PAGES.set(`${deferred}|${byStatus}|${anchored}`, pageStatement(deferred, byStatus, anchored));
}

// Past the last page (or an empty project): the total still comes from the counts.
const countsOnly = sql<[accountId: string, projectId: string, status: ArticleStatus | '*'], Counts>(
  'articles.list_counts',
  `SELECT ${COUNTS.replace(/\n\s+/, ' ')}`,
  { hot: true, prepared: true },
);

/**
 * A search or tag listing's page and its bounded count. Not prepared: the planner chooses per pattern
 * between the GIN indexes (rare matches) and walking the listing index (common ones).
 */
function filterStatements(f: { status: boolean; like: boolean; tag: boolean }): {
  page: Sql<FilterParams, ArticleSummaryRow>;
  count: Sql<FilterParams, { counted: number }>;
} {
  const where = ['account_id = $1', 'project_id = $2', 'deleted_at IS NULL'];
  let n = 2;
  if (f.status) where.push(`status = $${++n}`);
  if (f.like) {
    // Both sides lower-case, so the pg_trgm GIN indexes on lower(title) and handle answer it.
    where.push(`(lower(title) LIKE $${++n} OR handle LIKE $${n})`);
  }
  if (f.tag) where.push(`tags @> $${++n}::text[]`);
  const filter = where.join(' AND ');
  const name = flags([f.status, 'by_status'], [f.like, 'search'], [f.tag, 'tag']);
  return {
    page: sql(
      `articles.filter_page${name}`,
      `SELECT ${COLUMNS} FROM articles a WHERE ${filter} ORDER BY updated_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
      { hot: true },
    ),
    count: sql(`articles.filter_count${name}`, `SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE ${filter} LIMIT $${n + 1}) m`, {
      hot: true,
    }),
  };
}

const FILTERS = new Map<string, ReturnType<typeof filterStatements>>();
for (const status of [false, true]) {
  for (const [like, tag] of [
    [true, false],
    [false, true],
    [true, true],
  ]) {
    FILTERS.set(`${status}|${like}|${tag}`, filterStatements({ status, like, tag }));
  }
}

/** The anchors of a listing: every `every`-th row's keyset position (skipping the first), in one snapshot with the generation. */
const anchorsStatement = (byStatus: boolean) =>
  sql<
    [accountId: string, projectId: string, every: number, ...status: [] | [ArticleStatus]],
    { generation: string | null; updated_at: string | null; id: string | null }
  >(
    `articles.list_anchors${flags([byStatus, 'by_status'])}`,
    `WITH r AS (
           SELECT updated_at, id, row_number() OVER (ORDER BY updated_at DESC, id DESC) AS rn
             FROM articles WHERE project_id = $2 AND deleted_at IS NULL ${byStatus ? 'AND status = $4' : ''}
         )
         SELECT (SELECT generation::text FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*') AS generation,
                r.updated_at::text AS updated_at, r.id
           FROM (SELECT 1) one LEFT JOIN r ON r.rn % $3 = 1 AND r.rn > 1
          ORDER BY r.rn`,
    { hot: true },
  );
const anchors = anchorsStatement(false);
const anchorsByStatus = anchorsStatement(true);

/**
 * The statements of `list_articles`. The page statements and the counts run prepared (named): the
 * server parses and plans each of them once per connection.
 */
@Injectable()
export class ArticleListingRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * A page of the project's live articles (of one status, when given), `offset` rows after the top or,
   * with an anchor, after that anchor (inclusive); `deferred` reads the ids first (far pages).
   */
  async page(scope: ProjectScope, status: ArticleStatus | undefined, limit: number, offset: number, deferred: boolean, anchor?: Anchor): Promise<ListingPage> {
    const statement = PAGES.get(`${deferred}|${status !== undefined}|${anchor !== undefined}`)!;
    const base = [scope.accountId, scope.projectId, status ?? '*', limit, offset] as const;
    const found = await rows(this.db, statement, anchor ? [...base, anchor.updatedAt, anchor.id] : [...base]);
    const counts = found[0] ?? (await this.counts(scope, status));
    return { rows: found, total: Number(counts.total ?? 0), generation: counts.generation };
  }

  /** The listing's total and the project's generation (null: the project never had an article), without a page. */
  async counts(scope: ProjectScope, status: ArticleStatus | undefined): Promise<Counts> {
    return (await row(this.db, countsOnly, [scope.accountId, scope.projectId, status ?? '*']))!;
  }

  /** A page of a search or tag listing, and how many articles match, counted up to `cap` (both side by side). */
  async filtered(scope: ProjectScope, f: ListingFilter, limit: number, offset: number, cap: number): Promise<{ rows: ArticleSummaryRow[]; counted: number }> {
    const { page, count } = FILTERS.get(`${f.status !== undefined}|${f.like !== undefined}|${f.tag !== undefined}`)!;
    const params: (string | string[])[] = [scope.accountId, scope.projectId];
    if (f.status !== undefined) params.push(f.status);
    if (f.like !== undefined) params.push(f.like);
    if (f.tag !== undefined) params.push([f.tag]);
    const [found, counted] = await Promise.all([rows(this.db, page, [...params, limit, offset]), row(this.db, count, [...params, cap])]);
    return { rows: found, counted: counted!.counted };
  }

  /** The listing's anchors, with the generation they belong to (null: the project never had an article). */
  async anchors(scope: ProjectScope, status: ArticleStatus | undefined, every: number): Promise<{ generation: string | null; anchors: Anchor[] }> {
    const found = status
      ? await rows(this.db, anchorsByStatus, [scope.accountId, scope.projectId, every, status])
      : await rows(this.db, anchors, [scope.accountId, scope.projectId, every]);
    return { generation: found[0]?.generation ?? null, anchors: found.filter((r) => r.id !== null).map((r) => ({ updatedAt: r.updated_at!, id: r.id! })) };
  }
}
