import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import {
  InvalidCursorError,
  McpResources,
  type ResourceContents,
  type ResourceContext,
  type ResourcePage,
  type ResourceProvider,
  type ResourceProviderOptions,
  type ResourceTemplateEntry,
} from './mcp-resources.decorator.js';

interface Registered {
  name: string;
  provider: ResourceProvider;
}

/**
 * Every {@link McpResources} provider, found once at boot. `resources/list` walks them in order, each
 * page by page; its cursor says which provider and that provider's own cursor. Reads and
 * subscriptions go to the first provider that knows the URI.
 */
@Injectable()
export class ResourceRegistry implements OnModuleInit {
  private providers: Registered[] = [];
  private templateList: ResourceTemplateEntry[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    const found: Registered[] = [];
    for (const wrapper of this.discovery.getProviders({ metadataKey: McpResources.KEY })) {
      const { name } = this.discovery.getMetadataByDecorator(McpResources, wrapper) as ResourceProviderOptions;
      if (found.some((p) => p.name === name)) throw new Error(`Two resource providers are named "${name}".`);
      found.push({ name, provider: wrapper.instance as ResourceProvider });
    }
    this.providers = found;
    this.templateList = found.flatMap((p) => [...p.provider.templates()]);
  }

  templates(): ResourceTemplateEntry[] {
    return this.templateList;
  }

  /** A page of every provider's resources, `limit` at most (a provider's page may be shorter). */
  async list(ctx: ResourceContext, cursor: string | undefined): Promise<ResourcePage> {
    let index = 0;
    let own: string | undefined;
    if (cursor !== undefined) {
      const decoded = decode(cursor);
      index = this.providers.findIndex((p) => p.name === decoded?.p);
      if (!decoded || index < 0) throw new InvalidCursorError('unknown provider');
      own = decoded.c;
    }
    const resources: ResourcePage['resources'] = [];
    // Providers with nothing for this caller are skipped, so a page is empty only at the very end.
    for (; index < this.providers.length; index++, own = undefined) {
      const { name, provider } = this.providers[index];
      const page = await provider.list(ctx, own);
      resources.push(...page.resources);
      if (page.nextCursor !== undefined) return { resources, nextCursor: encode({ p: name, c: page.nextCursor }) };
      if (resources.length && index + 1 < this.providers.length) return { resources, nextCursor: encode({ p: this.providers[index + 1].name }) };
    }
    return { resources };
  }

  async read(uri: string, ctx: ResourceContext): Promise<ResourceContents[] | undefined> {
    for (const { provider } of this.providers) {
      const contents = await provider.read(uri, ctx);
      if (contents) return contents;
    }
    return undefined;
  }

  async locate(uri: string, ctx: ResourceContext): Promise<{ articleId?: string } | undefined> {
    for (const { provider } of this.providers) {
      const found = provider.locate ? await provider.locate(uri, ctx) : (await provider.read(uri, ctx)) && {};
      if (found) return found;
    }
    return undefined;
  }
}

interface Cursor {
  p: string;
  c?: string;
}

function encode(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function decode(cursor: string): Cursor | undefined {
  if (cursor.length > 1_000 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (value === null || typeof value !== 'object') return undefined;
    const { p, c } = value as { p?: unknown; c?: unknown };
    if (typeof p !== 'string' || (c !== undefined && typeof c !== 'string')) return undefined;
    return { p, c };
  } catch {
    return undefined;
  }
}
