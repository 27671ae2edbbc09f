import { ARTICLE_LIMITS } from '../articles/article-rules.js';
import { ARTICLE_STATUSES } from '../articles/article.entity.js';
import { HANDLE_PATTERN } from '../articles/handles.js';

/**
 * JSON Schemas of article results, shared by the article tools' `outputSchema`. A nullable field is an
 * `anyOf` with a `null` branch, never a `type` array, which clients that map schemas onto one `type`
 * per node reject (the MCP Inspector's `--strict` warns of it).
 */
const nullableDate = { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] };
const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] };

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
    featured_image_id: nullableString,
    source: { type: 'string', enum: ['human', 'ai'] },
    job_id: nullableString,
  },
  required: [...ARTICLE_SUMMARY_SCHEMA.required, 'project_id', 'body', 'created_at', 'featured_image_id', 'source', 'job_id'],
};

/** `get_article`'s answer: the article, and how many of its earlier states are kept. */
export const ARTICLE_WITH_REVISIONS_SCHEMA = {
  type: 'object' as const,
  properties: {
    ...ARTICLE_SCHEMA.properties,
    revisions: {
      type: 'object',
      description:
        'Earlier states of the article stored as revisions: each change keeps the previous state, and only the newest `limit` are kept (older ones are deleted).',
      properties: {
        kept: { type: 'integer', minimum: 0, description: 'How many earlier states are stored now.' },
        limit: { type: 'integer', minimum: 1, description: 'The most kept per article (ARTICLE_REVISIONS_KEPT).' },
      },
      required: ['kept', 'limit'],
    },
  },
  required: [...ARTICLE_SCHEMA.required, 'revisions'],
};

/** Input properties shared by create_article and update_article; the numbers are the domain's limits. */
export const ARTICLE_FIELD_PROPERTIES = {
  title: { type: 'string', minLength: 1, maxLength: ARTICLE_LIMITS.titleMax, description: `Title, 1 to ${ARTICLE_LIMITS.titleMax} characters.` },
  body: { type: 'string', maxLength: ARTICLE_LIMITS.bodyMaxBytes, description: 'Body in markdown, at most 1 MiB.' },
  handle: {
    type: 'string',
    minLength: 1,
    maxLength: ARTICLE_LIMITS.handleMax,
    pattern: HANDLE_PATTERN.source,
    description: `URL slug, unique in the project: lower-case letters and digits joined by single hyphens, at most ${ARTICLE_LIMITS.handleMax} characters.`,
  },
  excerpt: { type: 'string', maxLength: ARTICLE_LIMITS.excerptMax, description: `Short summary, at most ${ARTICLE_LIMITS.excerptMax} characters.` },
  tags: {
    type: 'array',
    maxItems: ARTICLE_LIMITS.tagsMax,
    items: { type: 'string', minLength: 1, maxLength: ARTICLE_LIMITS.tagMax },
    description: `Up to ${ARTICLE_LIMITS.tagsMax} tags of 1 to ${ARTICLE_LIMITS.tagMax} characters; replaces the article's tags.`,
  },
} as const;

export const ARTICLE_ID_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: 'The article id (from list_articles or get_article).',
} as const;
