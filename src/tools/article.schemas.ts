import { ARTICLE_STATUSES } from '../articles/article.entity.js';

/** JSON Schemas of article results, shared by the article tools' `outputSchema`. */
const nullableDate = { type: ['string', 'null'], format: 'date-time' };

export const ARTICLE_SUMMARY_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    handle: { type: 'string' },
    title: { type: 'string' },
    excerpt: { type: 'string' },
    status: { type: 'string', enum: ARTICLE_STATUSES },
    tags: { type: 'array', items: { type: 'string' } },
    published_at: nullableDate,
    updated_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer' },
  },
  required: ['id', 'handle', 'title', 'excerpt', 'status', 'tags', 'published_at', 'updated_at', 'version'],
};

export const ARTICLE_SCHEMA = {
  type: 'object' as const,
  properties: {
    ...ARTICLE_SUMMARY_SCHEMA.properties,
    project_id: { type: 'string' },
    body: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    featured_image_id: { type: ['string', 'null'] },
    source: { type: 'string', enum: ['human', 'ai'] },
    job_id: { type: ['string', 'null'] },
  },
  required: [...ARTICLE_SUMMARY_SCHEMA.required, 'project_id', 'body', 'created_at', 'featured_image_id', 'source', 'job_id'],
};
