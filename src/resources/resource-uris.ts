import type { ArticleView } from '../articles/article.views.js';

/**
 * The product's resource URIs, one source of truth for the resources, prompts and completions:
 *
 * - `reblog://projects/{project_id}/articles/{handle}` — an article by its handle (readable);
 * - `reblog://projects/{project_id}/articles/id/{article_id}` — the same article by id (stable: the
 *   URI `resources/list` gives, which survives a change of handle);
 * - `reblog://projects/{project_id}/media/{media_id}` — an image, as a binary resource.
 */
export const SCHEME = 'reblog:';

export const ARTICLE_BY_HANDLE_TEMPLATE = 'reblog://projects/{project_id}/articles/{handle}';
export const ARTICLE_BY_ID_TEMPLATE = 'reblog://projects/{project_id}/articles/id/{article_id}';
export const MEDIA_TEMPLATE = 'reblog://projects/{project_id}/media/{media_id}';

/** The variables of each product template, in order (what `completion/complete` may be asked about). */
export const TEMPLATE_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  [ARTICLE_BY_HANDLE_TEMPLATE]: ['project_id', 'handle'],
  [ARTICLE_BY_ID_TEMPLATE]: ['project_id', 'article_id'],
  [MEDIA_TEMPLATE]: ['project_id', 'media_id'],
};

export type ParsedUri = { kind: 'article'; projectId: string; by: { id: string } | { handle: string } } | { kind: 'media'; projectId: string; mediaId: string };

const seg = (value: string) => encodeURIComponent(value);

export const articleUri = (projectId: string, articleId: string) => `reblog://projects/${seg(projectId)}/articles/id/${seg(articleId)}`;
export const articleHandleUri = (projectId: string, handle: string) => `reblog://projects/${seg(projectId)}/articles/${seg(handle)}`;
export const mediaUri = (projectId: string, mediaId: string) => `reblog://projects/${seg(projectId)}/media/${seg(mediaId)}`;

/** A product URI taken apart; undefined for anything else (another scheme, another shape, bad escapes). */
export function parseUri(uri: string): ParsedUri | undefined {
  const m = /^reblog:\/\/projects\/([^/?#]+)\/(articles|media)\/([^?#]+)$/.exec(uri);
  if (!m) return undefined;
  let projectId: string;
  let rest: string[];
  try {
    projectId = decodeURIComponent(m[1]);
    rest = m[3].split('/').map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (m[2] === 'media') return rest.length === 1 && rest[0] ? { kind: 'media', projectId, mediaId: rest[0] } : undefined;
  if (rest.length === 1 && rest[0]) return { kind: 'article', projectId, by: { handle: rest[0] } };
  if (rest.length === 2 && rest[0] === 'id' && rest[1]) return { kind: 'article', projectId, by: { id: rest[1] } };
  return undefined;
}

export const ARTICLE_MIME_TYPE = 'text/markdown';

/**
 * An article as a markdown document: a YAML front matter of its metadata (JSON-quoted values, which
 * YAML reads as strings), then the body. What `resources/read` answers and prompts embed.
 */
export function articleMarkdown(article: ArticleView): string {
  const meta: Record<string, unknown> = {
    title: article.title,
    id: article.id,
    project_id: article.project_id,
    handle: article.handle,
    status: article.status,
    version: article.version,
    tags: article.tags,
    excerpt: article.excerpt,
    published_at: article.published_at,
    updated_at: article.updated_at,
    source: article.source,
    featured_image: article.featured_image_id ? mediaUri(article.project_id, article.featured_image_id) : null,
  };
  const lines = Object.entries(meta).map(([key, value]) => `${key}: ${JSON.stringify(value instanceof Date ? value.toISOString() : value)}`);
  return `---\n${lines.join('\n')}\n---\n\n${article.body ?? ''}`;
}
