import { Injectable } from '@nestjs/common';
import { McpMethod, type MethodCall } from '../protocol/mcp-method.js';
import type { MethodResult } from '../protocol/method-result.js';
import { CompletionsService } from './completions.service.js';

/** `completion/complete` of /mcp, found at boot by its {@link McpMethod} mark. */
@Injectable()
export class CompletionMethods {
  constructor(private readonly completions: CompletionsService) {}

  @McpMethod('completion/complete', { advertises: { completions: {} } })
  async complete({ principal, params }: MethodCall): Promise<MethodResult> {
    return { result: await this.completions.complete(principal, params) };
  }
}
