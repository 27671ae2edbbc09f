import { DomainError } from '../common/domain-error.js';
import { HANDLE_MAX, HANDLE_PATTERN } from './handles.js';

/** The limits of an article's fields; the tools publish the same numbers in their input schemas. */
export const ARTICLE_LIMITS = {
  titleMax: 300,
  excerptMax: 2_000,
  bodyMaxBytes: 1024 * 1024,
  tagsMax: 20,
  tagMax: 50,
  handleMax: HANDLE_MAX,
} as const;

/** Fields a writer may set; absent ones are left alone. */
export interface ArticleFields {
  title?: string;
  body?: string;
  handle?: string;
  excerpt?: string;
  tags?: string[];
}

const invalid = (name: string, rule: string) => new DomainError('invalid_arguments', `Invalid value for "${name}": ${rule}.`);

/** Length in code points, as JSON Schema's maxLength counts it. */
const length = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * Checks and normalises article fields for every writer (tools, jobs, admin): the tools' schemas
 * refuse most of this first; this is the rule the domain itself keeps. Tags are trimmed and
 * de-duplicated, keeping their order.
 */
export function checkArticleFields<T extends ArticleFields>(fields: T): T {
  const out = { ...fields };
  if (fields.title !== undefined) {
    if (typeof fields.title !== 'string' || fields.title.trim() === '') throw invalid('title', 'must be a non-empty string');
    if (length(fields.title) > ARTICLE_LIMITS.titleMax) throw invalid('title', `must be at most ${ARTICLE_LIMITS.titleMax} characters long`);
  }
  if (fields.body !== undefined && Buffer.byteLength(fields.body, 'utf8') > ARTICLE_LIMITS.bodyMaxBytes) {
    throw invalid('body', 'must be at most 1 MiB (1,048,576 bytes of UTF-8)');
  }
  if (fields.excerpt !== undefined && length(fields.excerpt) > ARTICLE_LIMITS.excerptMax) {
    throw invalid('excerpt', `must be at most ${ARTICLE_LIMITS.excerptMax} characters long`);
  }
  if (fields.handle !== undefined) {
    if (length(fields.handle) > ARTICLE_LIMITS.handleMax) throw invalid('handle', `must be at most ${ARTICLE_LIMITS.handleMax} characters long`);
    if (!HANDLE_PATTERN.test(fields.handle))
      throw invalid('handle', 'must be lower-case letters a-z and digits, words joined by single hyphens (like "my-first-post")');
  }
  if (fields.tags !== undefined) {
    const trimmed = fields.tags.map((t) => t.trim());
    for (const [i, tag] of trimmed.entries()) {
      if (tag === '') throw invalid(`tags.${i}`, 'a tag must not be empty');
      if (length(tag) > ARTICLE_LIMITS.tagMax) throw invalid(`tags.${i}`, `a tag must be at most ${ARTICLE_LIMITS.tagMax} characters long`);
    }
    const tags = [...new Set(trimmed)];
    if (tags.length > ARTICLE_LIMITS.tagsMax) throw invalid('tags', `at most ${ARTICLE_LIMITS.tagsMax} tags`);
    out.tags = tags;
  }
  return out;
}
