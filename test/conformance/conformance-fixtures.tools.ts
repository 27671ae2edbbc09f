import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '../../src/common/domain-error.js';
import { McpTool, type ContentBlock, type McpToolHandler, type ToolContext, type ToolDefinition } from '../../src/protocol/mcp-tool.decorator.js';
import { ContentReply } from './content-reply.js';

/**
 * The fixture tools that the server scenarios of `@modelcontextprotocol/conformance` call
 * (tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -error, -with-progress).
 * Names and outputs follow the scenario descriptions of the suite; registered only by the conformance
 * entry point (test/conformance/main.ts) and the suite's e2e test, never by the product's build.
 */

// A 1×1 red PNG.
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4AWP4z8DwHwAFAAH/e+m+7wAAAABJRU5ErkJggg==';
// 10 ms of silence: 8 kHz, mono, 16-bit PCM.
const SILENT_WAV = wav(80).toString('base64');

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

function fixture(name: string, title: string, description: string): ToolDefinition<typeof NO_ARGUMENTS> {
  // Declared, not derived from the name: the catalogue gives a verb it does not know the hints of a writer.
  return { name, title, description, input: NO_ARGUMENTS, scope: 'read', role: 'viewer', projectScoped: false, annotations: { readOnlyHint: true } };
}

function reply(...content: ContentBlock[]): ContentReply {
  return new ContentReply(content);
}

@McpTool(fixture('test_simple_text', 'Simple text', 'Conformance fixture: returns one text block.'))
@Injectable()
export class SimpleTextFixture implements McpToolHandler {
  async run() {
    return reply({ type: 'text', text: 'This is a simple text response for testing.' });
  }
}

@McpTool(fixture('test_image_content', 'Image content', 'Conformance fixture: returns a 1×1 PNG image block.'))
@Injectable()
export class ImageContentFixture implements McpToolHandler {
  async run() {
    return reply({ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' });
  }
}

@McpTool(fixture('test_audio_content', 'Audio content', 'Conformance fixture: returns a short WAV audio block.'))
@Injectable()
export class AudioContentFixture implements McpToolHandler {
  async run() {
    return reply({ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' });
  }
}

@McpTool(fixture('test_embedded_resource', 'Embedded resource', 'Conformance fixture: returns an embedded text resource.'))
@Injectable()
export class EmbeddedResourceFixture implements McpToolHandler {
  async run() {
    return reply({ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } });
  }
}

@McpTool(fixture('test_multiple_content_types', 'Multiple content types', 'Conformance fixture: returns a text, an image and a resource block.'))
@Injectable()
export class MultipleContentTypesFixture implements McpToolHandler {
  async run() {
    return reply(
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
    );
  }
}

@McpTool(fixture('test_error_handling', 'Error handling', 'Conformance fixture: always fails, as a tool error.'))
@Injectable()
export class ErrorHandlingFixture implements McpToolHandler {
  async run(): Promise<never> {
    // Through the product's own error path: a DomainError becomes an isError result.
    throw new DomainError('invalid_state', 'This tool intentionally returns an error for testing');
  }
}

@McpTool(fixture('test_tool_with_progress', 'Progress', 'Conformance fixture: reports progress 0, 0.5 and 1, about 50 ms apart.'))
@Injectable()
export class ProgressFixture implements McpToolHandler {
  async run(_args: unknown, { progress }: ToolContext) {
    progress(0, 'Started');
    await sleep(50);
    progress(0.5, 'Halfway');
    await sleep(50);
    progress(1, 'Done');
    return reply({ type: 'text', text: 'Progress test completed.' });
  }
}

export const CONFORMANCE_FIXTURES = [
  SimpleTextFixture,
  ImageContentFixture,
  AudioContentFixture,
  EmbeddedResourceFixture,
  MultipleContentTypesFixture,
  ErrorHandlingFixture,
  ProgressFixture,
];

function wav(samples: number): Buffer {
  const rate = 8000;
  const data = samples * 2;
  const out = Buffer.alloc(44 + data);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8, 'ascii');
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(data, 40);
  return out;
}
