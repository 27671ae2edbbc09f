import { ToolReply, type ContentBlock } from '../../src/protocol/mcp-tool.decorator.js';

/**
 * A fixture's answer of bare content blocks, as the conformance scenarios expect them: no JSON text
 * block and no `structuredContent` (the product's tools always answer those). It overrides
 * ToolReply.result(), the one place a reply shapes its `tools/call` result.
 */
export class ContentReply extends ToolReply {
  constructor(readonly content: ContentBlock[]) {
    super({});
  }

  override result(): Record<string, unknown> {
    return { content: this.content };
  }
}

/** One text block. */
export function text(value: string): ContentReply {
  return new ContentReply([{ type: 'text', text: value }]);
}
