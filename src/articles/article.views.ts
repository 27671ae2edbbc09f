import type { Article } from './article.entity.js';

/** The listing shape of an article (spec: "Summary"). */
export function articleSummary(a: Article) {
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

/** The full shape of an article (spec: "Article fields"). */
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
