import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ArticlesModule } from '../articles/articles.module.js';
import { ToolCatalogueModule } from '../protocol/tool-catalogue.module.js';
import { MediaModule } from '../media/media.module.js';
import { ArticleResources } from './article-resources.js';
import { ResourceMethods } from './resource-methods.js';
import { ResourceRegistry } from './resource-registry.js';
import { ResourcesRepository } from './resources.repository.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { ViewResources } from './view-resources.js';

/**
 * MCP resources: the registry of {@link McpResources} providers (the product's articles and media,
 * and any a module adds), the subscriptions table, and the `resources/*` methods of /mcp
 * (ResourceMethods), which the transport finds at boot.
 */
@Module({
  imports: [DiscoveryModule, ToolCatalogueModule, ArticlesModule, MediaModule],
  // ViewResources first: a client that takes no views finds it empty, and its pages stay what they were.
  providers: [ResourceRegistry, ViewResources, ArticleResources, ResourcesRepository, SubscriptionsRepository, ResourceMethods],
  exports: [ResourceRegistry, SubscriptionsRepository],
})
export class ResourcesModule {}
