import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ToolAccess } from './tool-access.js';
import { ToolRegistry } from './tool-registry.js';

/**
 * The tool catalogue and what each principal may run of it, on its own so that the features beside
 * tools (prompts, completions, resources) can apply the same rule without importing the transport.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [ToolRegistry, ToolAccess],
  exports: [ToolRegistry, ToolAccess],
})
export class ToolCatalogueModule {}
