import { Injectable } from '@nestjs/common';
import { InputRequired } from '../protocol/input.js';
import { ClientAsking, McpMethod, type MethodCall } from '../protocol/mcp-method.js';
import type { MethodResult } from '../protocol/method-result.js';
import { PromptsService } from './prompts.service.js';

/** The `prompts/*` methods of /mcp, found at boot by their {@link McpMethod} marks. */
@Injectable()
export class PromptMethods {
  constructor(
    private readonly prompts: PromptsService,
    private readonly inputs: ClientAsking,
  ) {}

  @McpMethod('prompts/list', { advertises: { prompts: {} } })
  list({ principal }: MethodCall): MethodResult {
    return { result: this.prompts.list(principal) };
  }

  /** `prompts/get`; in the 2026-07-28 era a prompt that asks the client ends with `input_required` until answered. */
  @McpMethod('prompts/get')
  async get({ principal, session, era, client, params, signal, stream }: MethodCall): Promise<MethodResult> {
    try {
      const asker = (name: string, args: unknown) =>
        this.inputs.forCall({ principal, era, client, session, stream, signal, method: 'prompts/get', name, args, params });
      return { result: await this.prompts.get(principal, params, asker) };
    } catch (err) {
      if (err instanceof InputRequired) return { result: err.result, outcome: err.outcome };
      throw err;
    }
  }
}
