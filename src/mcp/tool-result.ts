import { ToolReply, type ContentBlock } from '../protocol/mcp-tool.decorator.js';

/**
 * A `tools/call` result (docs/protocol.md#toolscall): the tool's JSON object as one pretty-printed text
 * block plus `structuredContent`, with a reply's extra content after it.
 */
export function toolResult(reply: object | ToolReply): Record<string, unknown> {
  if (reply instanceof ToolReply && reply.rawContent) return { content: reply.rawContent };
  const value = (reply instanceof ToolReply ? reply.value! : reply) as Record<string, unknown>;
  const extra: ContentBlock[] = reply instanceof ToolReply ? reply.extraContent : [];
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...extra], structuredContent: value };
}

/** A tool error: `{"error":{"code","message","details"?}}`, `details` as in the admin API's errors (the figures a model can act on). */
export function toolError(code: string, message: string, details?: unknown): Record<string, unknown> {
  const error = { code, message, ...(details !== undefined ? { details } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
}
