import { jsonToolResult, ToolReply } from '../protocol/mcp-tool.decorator.js';

/**
 * A `tools/call` result (docs/protocol.md#toolscall): a {@link ToolReply} shapes its own; any other answer is
 * {@link jsonToolResult} of the object (one pretty-printed text block plus `structuredContent`).
 */
export function toolResult(reply: object | ToolReply): Record<string, unknown> {
  return reply instanceof ToolReply ? reply.result() : jsonToolResult(reply as Record<string, unknown>);
}

/** A tool error: `{"error":{"code","message","details"?}}`, `details` as in the admin API's errors (the figures a model can act on). */
export function toolError(code: string, message: string, details?: unknown): Record<string, unknown> {
  const error = { code, message, ...(details !== undefined ? { details } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
}
