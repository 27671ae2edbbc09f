// The module hook of bench/servers/tracing-absent.mjs (which says why): the rules, and the `load` hook that
// applies them to the built modules as Node loads them.
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DIST = resolve(import.meta.dirname, '../../dist/src');

/** Built module (path under dist/src) → [pattern, replacement, how many times it must match]. */
export const RULES = {
  'mcp/mcp-body.middleware.js': [
    [/tracingOn\(\) \? context\.with\(startMcpSpan\(req\), next\) : next\(\)/g, 'next()', 1],
    [/if \(tracingOn\(\)\)\s+context\.with\(startMcpSpan\(req\), next\);\s+else\s+next\(\);/g, 'next();', 1],
  ],
  // The traced branch goes too (dead code would still weigh on V8's inlining of the function).
  'database/sql.js': [[/if \(!tracingOn\(\) \|\| !trace\.getActiveSpan\(\)\)\s+(return runStatement\(db, statement, params\);)[\s\S]*?\n}\n/g, '$1\n}\n', 1]],
  'mcp/mcp-responder.js': [[/if \(state\.span\)\s+(?:refusalEvent|endMcpSpan)\([^;]*\);/g, '', 2]],
  'metrics/metrics.service.js': [
    [/otel = metricsOn\(\) \? otelInstruments\(\) : null;/g, '', 1],
    [/if \(!this\.otel\)\s+return;[\s\S]*?this\.otel\.operationDuration\.record\([^;]*\);/g, '', 1],
    [/this\.otel\?\.\w+\.record\([^;]*\);/g, '', 2],
  ],
  'jobs/jobs.service.js': [[/traceContext: currentTraceparent\(\)/g, 'traceContext: null', 1]],
  'jobs/job-worker.service.js': [[/\(tracingOn\(\) \? this\.traced\(run\) : this\.execute\(run\)\)/g, 'this.execute(run)', 1]],
  'rate-limit/redis-sliding-window.store.js': [[/\(tracingOn\(\)\s+\? clientSpan\([^\n]*\n\s+: (this\.redis\.\w+\([^)]*\))\)/g, '$1', 2]],
  'ai/openai-http.client.js': [
    [/if \(!tracingOn\(\) \|\| !trace\.getActiveSpan\(\)\)\s+(return this\.send\(url, body, signal\);)[\s\S]*?\n {4}}\n/g, '$1\n    }\n', 1],
  ],
  'main.js': [[/startTelemetry\(\)/g, 'Promise.resolve(false)', 1]],
};

/** What a tracing site looks like in the built code (telemetry.js, which defines them, and mcp-span.js, only called from a site, aside). */
export const SITE = /\btracingOn\(\)|\bmetricsOn\(\)|\bcurrentTraceparent\(\)|\bstate\.span\b|\bthis\.otel\b|\bstartTelemetry\(\)/;
export const DEFINED_IN = new Set(['common/telemetry.js', 'mcp/mcp-span.js']);

/** The rewritten source of `file`; throws when a rule does not match as often as it must, or a site is left. */
export function rewrite(file, source) {
  let text = source;
  for (const [pattern, replacement, times] of RULES[file]) {
    const found = text.match(pattern)?.length ?? 0;
    if (found !== times)
      throw new Error(`tracing-absent: ${pattern} matched ${found} times in dist/src/${file}, not ${times}: update bench/servers/tracing-absent.mjs.`);
    text = text.replace(pattern, replacement);
  }
  const left = SITE.exec(text.replace(/^import .*$/gm, ''));
  if (left) throw new Error(`tracing-absent: dist/src/${file} still has "${left[0]}" after its rewrite: update bench/servers/tracing-absent.mjs.`);
  return text;
}

/** Node's `load` hook: a built module under dist/src that has rules comes back rewritten. */
export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!url.startsWith('file:')) return loaded;
  const file = relative(DIST, fileURLToPath(url));
  if (!RULES[file]) return loaded;
  return { ...loaded, source: rewrite(file, String(loaded.source)) };
}
