import { Injectable } from '@nestjs/common';
import { McpPrompt, type McpPromptHandler, type PromptDefinition } from '../../src/prompts/mcp-prompt.decorator.js';

/**
 * The fixture prompts that the server scenarios of `@modelcontextprotocol/conformance` get
 * (prompts-list, prompts-get-simple, -with-args, -embedded-resource, -with-image, completion-complete).
 * Names and messages follow the scenario descriptions; registered only by the conformance entry point
 * (test/conformance/main.ts) and its e2e test, never by the product's build. They need no tool, so
 * every credential sees them.
 */

// A 1×1 red PNG.
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4AWP4z8DwHwAFAAH/e+m+7wAAAABJRU5ErkJggg==';

function fixture(name: string, title: string, description: string, args: PromptDefinition['arguments'] = []): PromptDefinition {
  return { name, title, description, arguments: args, needs: [] };
}

@McpPrompt(fixture('test_simple_prompt', 'Simple prompt', 'Conformance fixture: a prompt without arguments.'))
@Injectable()
export class SimplePromptFixture implements McpPromptHandler {
  get() {
    return { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'This is a simple prompt for testing.' } }] };
  }
}

@McpPrompt(
  fixture('test_prompt_with_arguments', 'Prompt with arguments', 'Conformance fixture: a prompt with two required arguments, substituted into its message.', [
    // Fixed candidates, so completion/complete has something to propose for arg1.
    { name: 'arg1', description: 'First test argument', required: true, complete: ['paris', 'park', 'party', 'test', 'testing', 'tested'] },
    { name: 'arg2', description: 'Second test argument', required: true },
  ]),
)
@Injectable()
export class PromptWithArgumentsFixture implements McpPromptHandler {
  get(args: Readonly<Record<string, string>>) {
    return {
      messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }],
    };
  }
}

@McpPrompt(
  fixture('test_prompt_with_embedded_resource', 'Prompt with an embedded resource', 'Conformance fixture: embeds the resource named by resourceUri.', [
    { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
  ]),
)
@Injectable()
export class PromptWithEmbeddedResourceFixture implements McpPromptHandler {
  get(args: Readonly<Record<string, string>>) {
    return {
      messages: [
        {
          role: 'user' as const,
          content: { type: 'resource' as const, resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } },
        },
        { role: 'user' as const, content: { type: 'text' as const, text: 'Please process the embedded resource above.' } },
      ],
    };
  }
}

@McpPrompt(fixture('test_prompt_with_image', 'Prompt with an image', 'Conformance fixture: a prompt whose message carries a PNG image.'))
@Injectable()
export class PromptWithImageFixture implements McpPromptHandler {
  get() {
    return {
      messages: [
        { role: 'user' as const, content: { type: 'image' as const, data: RED_PIXEL_PNG, mimeType: 'image/png' } },
        { role: 'user' as const, content: { type: 'text' as const, text: 'Please analyze the image above.' } },
      ],
    };
  }
}

export const PROMPT_FIXTURES = [SimplePromptFixture, PromptWithArgumentsFixture, PromptWithEmbeddedResourceFixture, PromptWithImageFixture];
