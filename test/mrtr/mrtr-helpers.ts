import type { TestApp } from '../support/test-app.js';
import { ask, META_KEYS, type Answer } from '../support/wire2026.js';

/** What the conformance suite's 2026 client declares by default. */
export const ALL_CAPS = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

/** One 2026-07-28 request as a stateless client sends it (test/support/wire2026.ts), as the client `mrtr-e2e`. */
export function modern(
  t: Pick<TestApp, 'http'>,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  caps: Record<string, unknown> = ALL_CAPS,
): Promise<Answer> {
  return ask(t, token, method, params, caps, { [META_KEYS.clientInfo]: { name: 'mrtr-e2e', version: '1.0.0' } });
}

/** tools/call in 2026-07-28, with the retry's fields when given. */
export function callModern(
  t: Pick<TestApp, 'http'>,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
  retry: { inputResponses?: unknown; requestState?: unknown } = {},
  caps: Record<string, unknown> = ALL_CAPS,
) {
  return modern(t, token, 'tools/call', { name, arguments: args, ...retry }, caps);
}

/** An elicitation answer. */
export function accept(content: Record<string, unknown>) {
  return { action: 'accept', content };
}

/** The JSON a product tool answered (its text block). */
export function toolValue(result: any): any {
  return JSON.parse(result.content[0].text);
}
