import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, rows, sql } from '../database/sql.js';

/** Where a completion searches: the account, and the projects of it the caller may read. */
export interface CompletionScope {
  accountId: string;
  projectIds: string[];
}

// Each search is a prefix LIKE ($3, escaped, ending in %) served by an index range scan per project
// (migration 1764900000300-completion-indexes); $4 is one more than the values answered, to tell hasMore.
const articleIds = sql<[accountId: string, projectIds: string[], prefix: string, limit: number], { id: string }>(
  'completions.article_ids',
  `SELECT id FROM (
     (SELECT id, handle FROM articles
       WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND handle LIKE $3
       ORDER BY handle LIMIT $4)
     UNION
     (SELECT id, handle FROM articles
       WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND id::text LIKE $3
       ORDER BY id::text LIMIT $4)
   ) found ORDER BY handle, id LIMIT $4`,
  { hot: true },
);
const countArticleIds = sql<[accountId: string, projectIds: string[], prefix: string, cap: number], { n: number }>(
  'completions.count_article_ids',
  `SELECT count(*)::int AS n FROM (
     SELECT 1 FROM articles
      WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND (handle LIKE $3 OR id::text LIKE $3)
      LIMIT $4) capped`,
);
const handles = sql<[accountId: string, projectIds: string[], prefix: string, limit: number], { handle: string }>(
  'completions.handles',
  `SELECT DISTINCT handle FROM articles
    WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND handle LIKE $3
    ORDER BY handle LIMIT $4`,
  { hot: true },
);
const countHandles = sql<[accountId: string, projectIds: string[], prefix: string, cap: number], { n: number }>(
  'completions.count_handles',
  `SELECT count(DISTINCT handle)::int AS n FROM (
     SELECT handle FROM articles
      WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND handle LIKE $3
      LIMIT $4) capped`,
);
// A tag is proposed while a live article of the project carries it (project_tags only grows).
const LIVE_TAG = `EXISTS (SELECT 1 FROM articles a WHERE a.project_id = t.project_id AND a.account_id = t.account_id AND a.deleted_at IS NULL AND a.tags @> ARRAY[t.tag])`;
const tags = sql<[accountId: string, projectIds: string[], prefix: string, limit: number], { tag: string }>(
  'completions.tags',
  `SELECT DISTINCT t.tag FROM project_tags t
    WHERE t.project_id = ANY($2::uuid[]) AND t.account_id = $1 AND lower(t.tag) LIKE $3 AND ${LIVE_TAG}
    ORDER BY t.tag LIMIT $4`,
  { hot: true },
);
const countTags = sql<[accountId: string, projectIds: string[], prefix: string, cap: number], { n: number }>(
  'completions.count_tags',
  `SELECT count(DISTINCT tag)::int AS n FROM (
     SELECT t.tag FROM project_tags t
      WHERE t.project_id = ANY($2::uuid[]) AND t.account_id = $1 AND lower(t.tag) LIKE $3 AND ${LIVE_TAG}
      LIMIT $4) capped`,
);
const mediaIds = sql<[accountId: string, projectIds: string[], low: string, high: string, limit: number], { id: string }>(
  'completions.media_ids',
  `SELECT id FROM media WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND id BETWEEN $3::uuid AND $4::uuid ORDER BY id LIMIT $5`,
);
const countMediaIds = sql<[accountId: string, projectIds: string[], low: string, high: string, cap: number], { n: number }>(
  'completions.count_media_ids',
  `SELECT count(*)::int AS n FROM (SELECT 1 FROM media WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND id BETWEEN $3::uuid AND $4::uuid LIMIT $5) capped`,
);

/** At most `limit` values, and whether more matched. */
export interface Matches {
  values: string[];
  hasMore: boolean;
}

/** What a completer searches: article ids (by handle or id), handles, tags or media ids. */
export type SearchKind = 'article_id' | 'handle' | 'tag' | 'media_id';

/** The prefix searches of `completion/complete`; every statement filters by account and projects. */
@Injectable()
export class CompletionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async search(kind: SearchKind, scope: CompletionScope, prefix: string, limit: number): Promise<Matches> {
    const p = prefix.toLowerCase();
    let values: string[];
    if (kind === 'media_id') {
      const range = uuidRange(p);
      values = range ? (await rows(this.db, mediaIds, [scope.accountId, scope.projectIds, range[0], range[1], limit + 1])).map((r) => r.id) : [];
    } else {
      const params = [scope.accountId, scope.projectIds, likePrefix(p), limit + 1] as [string, string[], string, number];
      if (kind === 'article_id') values = (await rows(this.db, articleIds, params)).map((r) => r.id);
      else if (kind === 'handle') values = (await rows(this.db, handles, params)).map((r) => r.handle);
      else values = (await rows(this.db, tags, params)).map((r) => r.tag);
    }
    return { values: values.slice(0, limit), hasMore: values.length > limit };
  }

  /** How many values match, counting no further than `cap`. */
  async count(kind: SearchKind, scope: CompletionScope, prefix: string, cap: number): Promise<number> {
    const p = prefix.toLowerCase();
    if (kind === 'media_id') {
      const range = uuidRange(p);
      return range ? (await row(this.db, countMediaIds, [scope.accountId, scope.projectIds, range[0], range[1], cap]))!.n : 0;
    }
    const statement = kind === 'article_id' ? countArticleIds : kind === 'handle' ? countHandles : countTags;
    return (await row(this.db, statement, [scope.accountId, scope.projectIds, likePrefix(p), cap]))!.n;
  }
}

/** `prefix%` for LIKE, with LIKE's own characters (and its escape, the backslash) taken literally. */
export function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const UUID_SHAPE = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';

/** The lowest and highest uuid whose text starts with `prefix` (lower case); undefined when no uuid can. */
export function uuidRange(prefix: string): [string, string] | undefined {
  if (prefix.length > UUID_SHAPE.length) return undefined;
  for (let i = 0; i < prefix.length; i++) {
    const ok = UUID_SHAPE[i] === '-' ? prefix[i] === '-' : /[0-9a-f]/.test(prefix[i]);
    if (!ok) return undefined;
  }
  const fill = (digit: string) => prefix + UUID_SHAPE.slice(prefix.length).replace(/x/g, digit);
  return [fill('0'), fill('f')];
}
