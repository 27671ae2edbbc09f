import { DiscoveryService } from '@nestjs/core';
import type { Principal, ReachableProject } from '../auth/principal.js';

/** A `resources/list` entry (MCP "Resource"). */
export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: { lastModified?: string; audience?: ('user' | 'assistant')[]; priority?: number };
  _meta?: Record<string, unknown>;
}

/** A `resources/templates/list` entry (MCP "ResourceTemplate", RFC 6570 `uriTemplate`). */
export interface ResourceTemplateEntry {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** One item of `resources/read`'s `contents`: text or base64 `blob`. */
export type ResourceContents = { uri: string; mimeType?: string; _meta?: Record<string, unknown> } & ({ text: string } | { blob: string });

/**
 * Who reads, and where the product's articles and media are readable for them: the projects where
 * the credential could run `get_article` (scope `read`, role ≥ viewer, not disabled there). Empty
 * when it could run it nowhere.
 */
export interface ResourceContext {
  principal: Principal;
  readable: ReadonlyMap<string, ReachableProject>;
  /** Whether the client renders MCP Apps views (it declared the extension): only such a client lists and reads them. */
  views: boolean;
}

/** A page of a provider's resources; `cursor` is the provider's own, opaque to everybody else. */
export interface ResourcePage {
  resources: ResourceEntry[];
  nextCursor?: string;
}

/**
 * A source of MCP resources, marked with {@link McpResources} and found at boot. A provider answers
 * only for the URIs it owns: `read` and `locate` answer undefined for any other URI and for a URI it
 * owns that is not readable here (unknown, another account's, unreachable: all the same).
 */
export interface ResourceProvider {
  /** Its resources, page by page (a provider with a fixed few answers them all and no cursor). */
  list(ctx: ResourceContext, cursor: string | undefined): Promise<ResourcePage> | ResourcePage;
  templates(): readonly ResourceTemplateEntry[];
  read(uri: string, ctx: ResourceContext): Promise<ResourceContents[] | undefined> | ResourceContents[] | undefined;
  /**
   * What a subscription to `uri` watches: `{articleId}` for an article (updates come from its row),
   * `{}` for a resource that reads but is not tracked; undefined when `read` would not find it.
   * Without it, a URI that reads is watched as `{}`.
   */
  locate?(uri: string, ctx: ResourceContext): Promise<{ articleId?: string } | undefined>;
}

/** A `resources/list` cursor that this server did not give (or that no longer names a page). */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

/** Options of {@link McpResources}: the provider's name, unique, which `resources/list` cursors carry. */
export interface ResourceProviderOptions {
  name: string;
}

/**
 * Marks a provider as a source of MCP resources (the product's articles and media, or a test
 * module's fixtures); ResourceRegistry discovers every one at boot, in module order.
 */
export const McpResources = DiscoveryService.createDecorator<ResourceProviderOptions>();
