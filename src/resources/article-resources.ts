import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { DomainError } from '../common/domain-error.js';
import { isUuid } from '../common/ids.js';
import { MediaService } from '../media/media.service.js';
import {
  InvalidCursorError,
  McpResources,
  type ResourceContents,
  type ResourceContext,
  type ResourceEntry,
  type ResourcePage,
  type ResourceProvider,
  type ResourceTemplateEntry,
} from './mcp-resources.decorator.js';
import {
  ARTICLE_BY_HANDLE_TEMPLATE,
  ARTICLE_BY_ID_TEMPLATE,
  ARTICLE_MIME_TYPE,
  MEDIA_TEMPLATE,
  articleMarkdown,
  articleUri,
  mediaUri,
  parseUri,
  type ParsedUri,
} from './resource-uris.js';
import { ResourcesRepository, type ArticleResourceRow, type MediaResourceRow } from './resources.repository.js';

/** Resources per `resources/list` page. */
export const RESOURCES_PAGE = 50;

const TEMPLATES: readonly ResourceTemplateEntry[] = [
  {
    uriTemplate: ARTICLE_BY_HANDLE_TEMPLATE,
    name: 'article-by-handle',
    title: 'Article by handle',
    description: 'An article of a project by its handle (URL slug), as markdown with its metadata in a front matter. Project ids come from list_projects.',
    mimeType: ARTICLE_MIME_TYPE,
  },
  {
    uriTemplate: ARTICLE_BY_ID_TEMPLATE,
    name: 'article-by-id',
    title: 'Article by id',
    description: 'An article of a project by its id, as markdown with its metadata in a front matter; the URI stays the same when the handle changes.',
    mimeType: ARTICLE_MIME_TYPE,
  },
  {
    uriTemplate: MEDIA_TEMPLATE,
    name: 'media',
    title: 'Image',
    description: "An image of a project (a generated featured image), as a binary resource in the image's own type (image/png).",
    mimeType: 'image/png',
  },
];

/**
 * The product's resources: the live articles of the projects the caller can read (newest first),
 * then their images. Anything not readable — another account's, an unreachable project, one where
 * get_article is disabled, trashed, unknown, malformed — is simply not found.
 */
@McpResources({ name: 'reblog' })
@Injectable()
export class ArticleResources implements ResourceProvider {
  constructor(
    private readonly articles: ArticlesService,
    private readonly mediaService: MediaService,
    private readonly repository: ResourcesRepository,
  ) {}

  templates(): readonly ResourceTemplateEntry[] {
    return TEMPLATES;
  }

  async list({ principal, readable }: ResourceContext, cursor: string | undefined): Promise<ResourcePage> {
    const projectIds = [...readable.keys()];
    if (!projectIds.length) return { resources: [] };
    const at = cursor === undefined ? { a: null } : parseCursor(cursor);
    if (!at) throw new InvalidCursorError('not a page of articles or media');
    const resources: ResourceEntry[] = [];
    if ('a' in at) {
      const found = await this.repository.articles(principal.accountId, projectIds, RESOURCES_PAGE + 1, at.a ?? undefined);
      if (found.length > RESOURCES_PAGE) {
        const page = found.slice(0, RESOURCES_PAGE);
        const last = page[page.length - 1];
        return { resources: page.map(articleEntry), nextCursor: makeCursor({ a: { micros: last.cursor_at, id: last.id } }) };
      }
      resources.push(...found.map(articleEntry));
    }
    // The rest of the page: images, newest first.
    const room = RESOURCES_PAGE - resources.length;
    const found = await this.repository.media(principal.accountId, projectIds, room + 1, 'm' in at ? at.m : null);
    const page = found.slice(0, room);
    resources.push(...page.map(mediaEntry));
    return found.length > room ? { resources, nextCursor: makeCursor({ m: page.length ? page[page.length - 1].id : 'm' in at ? at.m : null }) } : { resources };
  }

  async read(uri: string, ctx: ResourceContext): Promise<ResourceContents[] | undefined> {
    const parsed = this.readableUri(uri, ctx);
    if (!parsed) return undefined;
    if (parsed.kind === 'media') {
      const media = await this.mediaService.findWithData(ctx.principal.accountId, [parsed.projectId], parsed.mediaId);
      return media ? [{ uri, mimeType: media.mime_type, blob: media.data.toString('base64') }] : undefined;
    }
    const article = await this.article(parsed, ctx);
    return article ? [{ uri, mimeType: ARTICLE_MIME_TYPE, text: articleMarkdown(article) }] : undefined;
  }

  async locate(uri: string, ctx: ResourceContext): Promise<{ articleId?: string } | undefined> {
    const parsed = this.readableUri(uri, ctx);
    if (!parsed) return undefined;
    if (parsed.kind === 'media') {
      return (await this.mediaService.findWithData(ctx.principal.accountId, [parsed.projectId], parsed.mediaId)) ? {} : undefined;
    }
    const article = await this.article(parsed, ctx);
    return article ? { articleId: article.id } : undefined;
  }

  /** The URI taken apart, when it is a product URI of a project the caller can read. */
  private readableUri(uri: string, { readable }: ResourceContext): ParsedUri | undefined {
    const parsed = parseUri(uri);
    return parsed && isUuid(parsed.projectId) && readable.has(parsed.projectId) ? parsed : undefined;
  }

  private async article(parsed: Extract<ParsedUri, { kind: 'article' }>, ctx: ResourceContext) {
    try {
      return await this.articles.get({ accountId: ctx.principal.accountId, projectId: parsed.projectId }, parsed.by);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'not_found') return undefined;
      throw err;
    }
  }
}

type At = { a: { micros: string; id: string } | null } | { m: string | null };

function makeCursor(at: At): string {
  return 'a' in at ? `a.${at.a!.micros}.${at.a!.id}` : `m.${at.m ?? ''}`;
}

function parseCursor(cursor: string): At | undefined {
  let m = /^a\.(\d{1,19})\.([0-9a-f-]{36})$/.exec(cursor);
  if (m && isUuid(m[2])) return { a: { micros: m[1], id: m[2] } };
  m = /^m\.([0-9a-f-]{36})?$/.exec(cursor);
  if (m && (m[1] === undefined || isUuid(m[1]))) return { m: m[1] ?? null };
  return undefined;
}

function articleEntry(a: ArticleResourceRow): ResourceEntry {
  return {
    uri: articleUri(a.project_id, a.id),
    name: a.handle,
    title: a.title,
    ...(a.excerpt ? { description: a.excerpt } : {}),
    mimeType: ARTICLE_MIME_TYPE,
    annotations: { lastModified: new Date(a.updated_at).toISOString() },
  };
}

function mediaEntry(m: MediaResourceRow): ResourceEntry {
  return {
    uri: mediaUri(m.project_id, m.id),
    name: m.id,
    title: `Image ${m.width}×${m.height}`,
    description: `A ${m.width}×${m.height} image (${m.mime_type}).`,
    mimeType: m.mime_type,
    size: m.size,
  };
}
