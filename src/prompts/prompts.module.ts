import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ArticlesModule } from '../articles/articles.module.js';
import { ToolCatalogueModule } from '../protocol/tool-catalogue.module.js';
import { DraftArticlePrompt } from './draft-article.prompt.js';
import { EditForTonePrompt } from './edit-for-tone.prompt.js';
import { PromptMethods } from './prompt-methods.js';
import { PromptRegistry } from './prompt-registry.js';
import { PromptsService } from './prompts.service.js';
import { PublishChecklistPrompt } from './publish-checklist.prompt.js';
import { ReadableArticles } from './readable-articles.js';

/** The product's prompts (writing workflows), found at boot like tools, and `prompts/list` / `prompts/get`. */
@Module({
  imports: [DiscoveryModule, ToolCatalogueModule, ArticlesModule],
  providers: [PromptRegistry, PromptsService, PromptMethods, ReadableArticles, DraftArticlePrompt, EditForTonePrompt, PublishChecklistPrompt],
  exports: [PromptsService, ReadableArticles],
})
export class PromptsModule {}
