import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ArticlesModule } from '../articles/articles.module.js';
import { MediaModule } from '../media/media.module.js';
import { ArticleResources } from './article-resources.js';
import { ResourceRegistry } from './resource-registry.js';
import { ResourcesRepository } from './resources.repository.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';

/**
 * MCP resources: the registry of {@link McpResources} providers (the product's articles and media,
 * and any a module adds), and the subscriptions table. The `resources/*` methods (ResourceMethods)
 * are McpModule's, which imports this module.
 */
@Module({
  imports: [DiscoveryModule, ArticlesModule, MediaModule],
  providers: [ResourceRegistry, ArticleResources, ResourcesRepository, SubscriptionsRepository],
  exports: [ResourceRegistry, SubscriptionsRepository],
})
export class ResourcesModule {}
