import { Module } from '@nestjs/common';
import { PromptsModule } from '../prompts/prompts.module.js';
import { CompletionMethods } from './completion-methods.js';
import { CompletionsRepository } from './completions.repository.js';
import { CompletionsService } from './completions.service.js';

/** `completion/complete`: prompt arguments and resource-template variables, from the caller's readable data. */
@Module({
  imports: [PromptsModule],
  providers: [CompletionsService, CompletionsRepository, CompletionMethods],
  exports: [CompletionsService],
})
export class CompletionsModule {}
