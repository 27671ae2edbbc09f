import { ToolReply } from '../protocol/mcp-tool.decorator.js';
import { toolResult } from './tool-result.js';

describe('toolResult', () => {
  it('answers a plain object as one pretty-printed text block plus structuredContent', () => {
    expect(toolResult({ id: 'a' })).toEqual({ content: [{ type: 'text', text: '{\n  "id": "a"\n}' }], structuredContent: { id: 'a' } });
  });

  it('answers a frozen object (served again unchanged) as the same JSON text, made once', () => {
    const answer = Object.freeze({ items: Object.freeze([Object.freeze({ id: 'a', at: new Date(0) })]) });
    const text = toolResult(answer);
    expect(text).toBe(JSON.stringify(toolResult({ items: [{ id: 'a', at: new Date(0) }] })));
    expect(toolResult(answer)).toBe(text);
    // A different frozen answer is serialised for itself.
    expect(toolResult(Object.freeze({ items: [] }))).toBe(
      JSON.stringify({ content: [{ type: 'text', text: '{\n  "items": []\n}' }], structuredContent: { items: [] } }),
    );
  });

  it("puts a ToolReply's extra content after the text block; its outcome is not part of the result", () => {
    const image = { type: 'image', data: 'AA==', mimeType: 'image/png' };
    expect(toolResult(new ToolReply({ id: 'a' }, [image], 'setup_required'))).toEqual({
      content: [{ type: 'text', text: '{\n  "id": "a"\n}' }, image],
      structuredContent: { id: 'a' },
    });
  });

  it('lets a ToolReply that overrides result() shape its own (the hook the conformance fixtures use)', () => {
    class Bare extends ToolReply {
      override result() {
        return { content: [{ type: 'text', text: 'bare' }] };
      }
    }
    expect(toolResult(new Bare({}))).toEqual({ content: [{ type: 'text', text: 'bare' }] });
  });
});
