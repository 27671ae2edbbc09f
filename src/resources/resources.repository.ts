import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rows, sql } from '../database/sql.js';

/** An article as `resources/list` shows it, with its `updated_at` in microseconds since the epoch (the cursor). */
export interface ArticleResourceRow {
  id: string;
  project_id: string;
  handle: string;
  title: string;
  excerpt: string;
  updated_at: Date;
  cursor_at: string;
}

/** An image as `resources/list` shows it (no bytes). */
export interface MediaResourceRow {
  id: string;
  project_id: string;
  mime_type: string;
  width: number;
  height: number;
  size: number;
}

const ARTICLE_COLUMNS = `id, project_id, handle, title, excerpt, updated_at, (extract(epoch FROM updated_at) * 1000000)::bigint::text AS cursor_at`;

// Newest first, as list_articles: the order of articles_list_idx (project_id, updated_at DESC, id DESC), per project.
const articlesFirst = sql<[accountId: string, projectIds: string[], limit: number], ArticleResourceRow>(
  'resources.articles_first',
  `SELECT ${ARTICLE_COLUMNS} FROM articles
    WHERE account_id = $1 AND project_id = ANY($2::uuid[]) AND deleted_at IS NULL
    ORDER BY updated_at DESC, id DESC LIMIT $3`,
);
// Keyset, exact to the microsecond (a JS Date is not).
const articlesAfter = sql<[accountId: string, projectIds: string[], limit: number, updatedAtMicros: string, id: string], ArticleResourceRow>(
  'resources.articles_after',
  `SELECT ${ARTICLE_COLUMNS} FROM articles
    WHERE account_id = $1 AND project_id = ANY($2::uuid[]) AND deleted_at IS NULL
      AND (updated_at, id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid)
    ORDER BY updated_at DESC, id DESC LIMIT $3`,
);
// Media ids are UUID v7: newest first is id order (media_project_idx).
const mediaPage = sql<[accountId: string, projectIds: string[], limit: number, afterId: string | null], MediaResourceRow>(
  'resources.media_page',
  `SELECT id, project_id, mime_type, width, height, size FROM media
    WHERE account_id = $1 AND project_id = ANY($2::uuid[]) AND ($4::uuid IS NULL OR id < $4::uuid)
    ORDER BY id DESC LIMIT $3`,
);

/** What `resources/list` reads of `articles` and `media`: the caller's readable projects only. */
@Injectable()
export class ResourcesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  articles(accountId: string, projectIds: string[], limit: number, after?: { micros: string; id: string }): Promise<ArticleResourceRow[]> {
    return after
      ? rows(this.db, articlesAfter, [accountId, projectIds, limit, after.micros, after.id])
      : rows(this.db, articlesFirst, [accountId, projectIds, limit]);
  }

  media(accountId: string, projectIds: string[], limit: number, afterId: string | null): Promise<MediaResourceRow[]> {
    return rows(this.db, mediaPage, [accountId, projectIds, limit, afterId]);
  }
}
