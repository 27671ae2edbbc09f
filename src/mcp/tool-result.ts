/** A tool error: `{"error":{"code","message","details"?}}`, `details` as in the admin API's errors (the figures a model can act on). */
export function toolError(code: string, message: string, details?: unknown): Record<string, unknown> {
  const error = { code, message, ...(details !== undefined ? { details } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
}
