// Preloaded with `node --import` before dist/src/main.js by bench/tracing.bench.mjs: the same build with
// its tracing code taken out, as the baseline that "tracing off" is measured against. A module hook
// rewrites, as each built module is loaded, every place where the server asks whether tracing (or OTLP
// metrics) is on into the code it would be without tracing: the plain call, no test, no span, no
// attribute map, no trace context on a job, no SDK start. The product has no such switch; only this
// bench uses it.
//
// Honest by construction: each rewrite must match exactly as many times as listed (else the bench stops,
// naming the file), and before the server starts every built file is scanned for a tracing call that no
// rule covers (a new site must be added here).
import { readdirSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import { join, relative } from 'node:path';
import { DEFINED_IN, DIST, RULES, SITE, rewrite } from './tracing-absent.hook.mjs';

function builtFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? builtFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

// Every built file: each rule's file rewrites cleanly, and no other file has a tracing site.
for (const path of builtFiles(DIST)) {
  const file = relative(DIST, path);
  const source = readFileSync(path, 'utf8');
  if (RULES[file]) rewrite(file, source);
  else if (!DEFINED_IN.has(file) && SITE.test(source.replace(/^import .*$/gm, '')))
    throw new Error(
      `tracing-absent: dist/src/${file} has a tracing site (${SITE.exec(source)[0]}) that no rule removes: add one to bench/servers/tracing-absent.mjs.`,
    );
}

// The hook runs on Node's loader thread: it rewrites the listed modules as they load.
register('./tracing-absent.hook.mjs', import.meta.url);
