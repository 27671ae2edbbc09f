import type { Article } from './article.entity.js';

/** The columns a listing reads. */
export type ArticleSummaryRow = Pick<Article, 'id' | 'handle' | 'title' | 'excerpt' | 'status' | 'tags' | 'published_at' | 'updated_at' | 'version'>;

/** The columns the trash listing reads. */
export type TrashedArticle = ArticleSummaryRow & Pick<Article, 'account_id' | 'project_id' | 'deleted_at' | 'deleted_by'>;

/** The listing shape of an article (docs/protocol.md#articles). */
export function articleSummary(a: ArticleSummaryRow) {
  return {
    id: a.id,
    handle: a.handle,
    title: a.title,
    excerpt: a.excerpt,
    status: a.status,
    tags: a.tags,
    published_at: a.published_at,
    updated_at: a.updated_at,
    version: a.version,
  };
}

/** The full shape of an article (docs/protocol.md#articles). */
export function articleView(a: Article) {
  return {
    id: a.id,
    project_id: a.project_id,
    handle: a.handle,
    title: a.title,
    excerpt: a.excerpt,
    body: a.body,
    status: a.status,
    tags: a.tags,
    published_at: a.published_at,
    created_at: a.created_at,
    updated_at: a.updated_at,
    version: a.version,
    featured_image_id: a.featured_image_id,
    source: a.source,
    job_id: a.job_id,
  };
}

export type ArticleSummary = ReturnType<typeof articleSummary>;
export type ArticleView = ReturnType<typeof articleView>;

/** Days an article stays in the trash before it is purged. */
export const TRASH_DAYS = 30;

/** An article in the trash: its summary, who trashed it and when, and when it will be purged. */
export function trashedView(a: TrashedArticle) {
  const deletedAt = a.deleted_at as Date;
  return {
    ...articleSummary(a),
    project_id: a.project_id,
    deleted_at: deletedAt,
    deleted_by: a.deleted_by,
    purge_at: new Date(deletedAt.getTime() + TRASH_DAYS * 86_400_000),
  };
}

export type TrashedArticleView = ReturnType<typeof trashedView>;
