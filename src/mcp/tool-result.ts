import { jsonToolResult, ToolReply } from '../protocol/mcp-tool.decorator.js';

/**
 * The JSON text of frozen answers, by answer. An answer frozen all the way down (a kept listing page: the page,
 * its items and their tags) is served again unchanged, so it is serialised once.
 */
const serialised = new WeakMap<object, string>();

/**
 * A `tools/call` result (docs/protocol.md#toolscall): a {@link ToolReply} shapes its own; any other answer is
 * {@link jsonToolResult} of the object (one pretty-printed text block plus `structuredContent`), as JSON text
 * already made when the answer is frozen.
 */
export function toolResult(reply: object | ToolReply): Record<string, unknown> | string {
  if (reply instanceof ToolReply) return reply.result();
  if (!Object.isFrozen(reply)) return jsonToolResult(reply as Record<string, unknown>);
  let text = serialised.get(reply);
  if (text === undefined) serialised.set(reply, (text = JSON.stringify(jsonToolResult(reply as Record<string, unknown>))));
  return text;
}

/** A tool error: `{"error":{"code","message","details"?}}`, `details` as in the admin API's errors (the figures a model can act on). */
export function toolError(code: string, message: string, details?: unknown): Record<string, unknown> {
  const error = { code, message, ...(details !== undefined ? { details } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
}
