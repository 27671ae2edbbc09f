import { Injectable, Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import { ARTICLE_VIEW, ARTICLES_VIEW, VIEW_MIME_TYPE } from '../protocol/views.js';
import {
  McpResources,
  type ResourceContents,
  type ResourceContext,
  type ResourceEntry,
  type ResourcePage,
  type ResourceProvider,
  type ResourceTemplateEntry,
} from './mcp-resources.decorator.js';

/** Where `npm run build` writes the views (scripts/build-views.mjs), from the working folder the server runs in. */
export const VIEWS_DIR = resolve('dist', 'views');

/**
 * What the host applies to a view (SEP-1865 `_meta.ui`): no external origin at all (the view is one
 * self-contained document; images come as `data:` URLs in the results), a border from the host.
 */
const VIEW_META = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } };

const VIEWS: readonly (ResourceEntry & { file: string })[] = [
  {
    uri: ARTICLE_VIEW,
    file: 'article.html',
    name: 'article-view',
    title: 'Article',
    description: 'An article as it will read, with the actions this credential may take on it; a writing job in progress; the writer setup form.',
    mimeType: VIEW_MIME_TYPE,
  },
  {
    uri: ARTICLES_VIEW,
    file: 'articles.html',
    name: 'articles-view',
    title: 'Articles',
    description: "A project's articles, filtered by status, a page at a time; each opens as the article view shows it.",
    mimeType: VIEW_MIME_TYPE,
  },
];

/**
 * The MCP Apps views (docs/protocol.md#mcp-apps-views) as `ui://` resources: listed and readable only by
 * a client that declared the extension (any other one lists and reads exactly what it did before).
 * The HTML is built once by `npm run build` and read from disk on first use.
 */
@McpResources({ name: 'views' })
@Injectable()
export class ViewResources implements ResourceProvider {
  private readonly log = new Logger(ViewResources.name);
  private readonly html = new Map<string, string>();

  list(ctx: ResourceContext): ResourcePage {
    return { resources: ctx.views ? VIEWS.map(({ file: _file, ...entry }) => ({ ...entry, _meta: VIEW_META })) : [] };
  }

  templates(): readonly ResourceTemplateEntry[] {
    return [];
  }

  read(uri: string, ctx: ResourceContext): ResourceContents[] | undefined {
    const view = ctx.views ? VIEWS.find((v) => v.uri === uri) : undefined;
    if (!view) return undefined;
    return [{ uri, mimeType: VIEW_MIME_TYPE, text: this.load(view.file), _meta: VIEW_META }];
  }

  locate(uri: string, ctx: ResourceContext): Promise<{ articleId?: string } | undefined> {
    return Promise.resolve(ctx.views && VIEWS.some((v) => v.uri === uri) ? {} : undefined);
  }

  private load(file: string): string {
    let text = this.html.get(file);
    if (text === undefined) {
      try {
        text = readFileSync(resolve(VIEWS_DIR, file), 'utf8');
      } catch (err) {
        this.log.error(`The MCP Apps view ${file} is not built (${(err as Error).message}); run npm run build.`);
        throw new RpcError(RpcCode.InternalError, `The view ${file} is not available on this server; it is logged.`);
      }
      this.html.set(file, text);
    }
    return text;
  }
}
