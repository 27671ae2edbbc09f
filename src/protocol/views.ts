// MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865; docs/protocol.md#mcp-apps-views): the
// views this server offers, as `ui://` resources, to the clients that declare the extension.

/** The MCP Apps extension's id, the key a client declares it under in `capabilities.extensions`. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The MIME type of an MCP Apps view (an HTML document the host renders in a sandboxed iframe). */
export const VIEW_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * Whether the client renders MCP Apps views (docs/protocol.md#mcp-apps-views): it declares the extension
 * as an object under `extensions` (2025: initialize's capabilities, kept on its session; 2026-07-28: the
 * request's `_meta`), and when it lists the MIME types it renders, ours is among them.
 */
export function takesViews(capabilities: Record<string, unknown>): boolean {
  const extensions = capabilities.extensions;
  if (extensions === null || typeof extensions !== 'object' || Array.isArray(extensions)) return false;
  const ui = (extensions as Record<string, unknown>)[UI_EXTENSION];
  if (ui === null || typeof ui !== 'object' || Array.isArray(ui)) return false;
  const mimeTypes = (ui as { mimeTypes?: unknown }).mimeTypes;
  return !Array.isArray(mimeTypes) || mimeTypes.includes(VIEW_MIME_TYPE);
}

/** The article view: one article as it will read, its actions, a running job's progress, the writer setup form. */
export const ARTICLE_VIEW = 'ui://reblog/article';
/** The articles view: a project's articles, a page at a time, each opening in the article view's screen. */
export const ARTICLES_VIEW = 'ui://reblog/articles';
