// The sanitizer (src/ai/sanitize.ts) on random and on adversarial input, in one run:
//
//   random       BENCH_SANITIZE_INPUTS inputs (10,000) from fast-check with a fixed seed: arbitrary strings
//                and strings built from HTML-ish fragments (src/ai/sanitize.fragments.json, as the property
//                tests build them), each through sanitizeText, against a baseline beside it: the same inputs
//                through a trivial linear pass, String.prototype.replace of "<" with "&lt;"
//   adversarial  inputs built to make a pattern backtrack or rescan ("]:" and spaces, unclosed "<"
//                destinations, nested links, tags, entities...), at BENCH_SANITIZE_KB (100) and twice that:
//                the time at 2x over the time at 1x is about 2 for a linear scan and 4 for a quadratic one
//
// Prints a table, writes bench/results/latest.json (key "sanitize"). Exit code 1 when an adversarial input
// scales worse than BENCH_SANITIZE_MAX_SCALING (3) from 1x to 2x, or takes more than 2 s at 1x (then not
// run at 2x).
//
//   BENCH_SANITIZE_INPUTS=10000
//   BENCH_SANITIZE_KB=100
//   BENCH_SANITIZE_MAX_SCALING=3
//   BENCH_SKIP_BUILD=true  reuse dist/ as it is
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../scripts/lib/server.mjs';
import { build, saveResult, table } from './lib/bench.mjs';

const INPUTS = Number(process.env.BENCH_SANITIZE_INPUTS ?? 10_000);
const KB = Number(process.env.BENCH_SANITIZE_KB ?? 100);
const MAX_SCALING = Number(process.env.BENCH_SANITIZE_MAX_SCALING ?? 3);
const TOO_SLOW_MS = 2_000;

const baseline = (text) => text.replace(/</g, '&lt;');

/**
 * Median milliseconds per call of fn on each input, measured in interleaved rounds (each input once per
 * round, so a burst of other work on the machine hits them alike) after a warm-up call of each: 7 samples
 * per input, each repeating the call until it has run ≥ 20 ms. When a first call takes more than
 * TOO_SLOW_MS, the first calls are the answer (null for the inputs after it, not run).
 */
function perCall(fn, inputs) {
  const first = [];
  for (const input of inputs) {
    const t = performance.now();
    fn(input);
    first.push(performance.now() - t);
    if (first.at(-1) > TOO_SLOW_MS) return inputs.map((_, i) => first[i] ?? null);
  }
  const reps = first.map((once) => Math.max(1, Math.ceil(20 / Math.max(once, 0.01))));
  const samples = inputs.map(() => []);
  for (let round = 0; round < 7; round++) {
    inputs.forEach((input, i) => {
      const t = performance.now();
      for (let r = 0; r < reps[i]; r++) fn(input);
      samples[i].push((performance.now() - t) / reps[i]);
    });
  }
  return samples.map((s) => s.sort((a, b) => a - b)[3]);
}

/** Inputs of about `chars` characters: repeat `unit` (with an optional head and tail). */
const repeat =
  (unit, { head = '', tail = '' } = {}) =>
  (chars) =>
    head + unit.repeat(Math.max(1, Math.round((chars - head.length - tail.length) / unit.length))) + tail;

/** The adversarial inputs: each made one of the old patterns backtrack or rescan, or targets a scan that could. */
const ADVERSARIAL = [
  ['"]:" + spaces, no destination (was quadratic: [ \\t]*\\n?[ \\t]*)', (n) => ']:' + ' '.repeat(n - 2)],
  ['"]:" + spaces + LF + spaces (was quadratic)', (n) => ']:' + ' '.repeat(n / 2) + '\n' + ' '.repeat(n / 2 - 3)],
  ['"]: <" repeated on one line (was quadratic: each <...> searched to the line end)', repeat(']: <')],
  ['"[t]: <aaa" definitions on one line (was quadratic)', repeat('[t]: <' + 'a'.repeat(50))],
  ['"[a](x" nested in one destination', repeat('[a](x', { tail: '](javascript:y)' })],
  ['"](<" repeated', repeat('](<')],
  ['"](" + spaces repeated', repeat('](' + ' '.repeat(30))],
  ['"]:" + entity-padded scheme', repeat(']:&#0000000106;&#9;')],
  ['"<a x=" repeated (attribute scan)', repeat('<a x=')],
  ['"<a " + quoted values holding "<"', repeat(' x="<"', { head: '<a' })],
  ['"<a " + event handlers', repeat(' onx=1', { head: '<a' })],
  ['unclosed quoted values', repeat('<a x="')],
  ['"<script>" repeated (unclosed)', repeat('<script>')],
  ['"<script></script" repeated', repeat('<script></script')],
  ['nested "<scr" ... "ipt>" (layers peeled per pass)', (n) => '<scr'.repeat(Math.round(n / 8)) + 'ipt>'.repeat(Math.round(n / 8))],
  ['"<ab:" + long run (autolink scan)', repeat('<ab:' + 'x'.repeat(200))],
  ['"<" + 40 scheme characters (autolink scheme)', repeat('<' + 'a'.repeat(40))],
  ['entities in a value', (n) => '<a href="' + '&#x'.repeat(Math.round(n / 3)) + '">'],
  ['backslashes in a destination', (n) => '[x](' + '\\'.repeat(n - 5) + ')'],
  ['U+00A0 after a tag name', (n) => '<a' + '\u00a0'.repeat(n - 2)],
];

async function main() {
  const loadBefore = loadavg();
  console.log(
    `sanitize bench: ${cpus().length} CPUs (load average ${loadBefore[0].toFixed(1)}), node ${process.version}, ${INPUTS} random inputs, adversarial at ${KB} KB and ${2 * KB} KB`,
  );
  await build();
  const { sanitizeText, sanitizeDraft } = await import(join(ROOT, 'dist/src/ai/sanitize.js'));

  // Random inputs, built as src/ai/sanitize.property.spec.ts builds them.
  const { fragments } = JSON.parse(readFileSync(join(ROOT, 'src/ai/sanitize.fragments.json'), 'utf8'));
  const htmlish = fc
    .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, fc.string({ maxLength: 3, unit: 'grapheme' })), { maxLength: 40 })
    .map((p) => p.join(''));
  const inputs = fc.sample(fc.oneof(fc.string({ maxLength: 200, unit: 'binary' }), htmlish), { numRuns: INPUTS, seed: 42 });
  const chars = inputs.reduce((n, s) => n + s.length, 0);
  const all = (fn) => () => {
    for (const s of inputs) fn(s);
  };
  const [randomMs, randomBaselineMs] = perCall((f) => f(), [all(sanitizeText), all(baseline)]);
  const random = {
    inputs: INPUTS,
    chars,
    sanitizeMs: +randomMs.toFixed(2),
    baselineMs: +randomBaselineMs.toFixed(2),
    ratio: +(randomMs / randomBaselineMs).toFixed(1),
  };
  console.log('');
  console.log(
    table(
      ['random inputs', 'chars', 'sanitizeText ms', 'baseline ms', '× baseline'],
      [[`${INPUTS} (seed 42)`, chars, random.sanitizeMs, random.baselineMs, random.ratio]],
    ),
  );

  // Adversarial inputs at 1x and 2x; sanitizeDraft's tag de-duplication (was quadratic) with 10k and 20k tags.
  const size = KB * 1024;
  const cases = ADVERSARIAL.map(([name, build]) => ({ name, fn: sanitizeText, at: (k) => build(k * size) }));
  const tags = (k) => ({ title: 't', excerpt: '', body: '', tags: Array.from({ length: k * 10_000 }, (_, i) => `tag ${i}`) });
  cases.push({
    name: 'sanitizeDraft, 10k / 20k distinct tags (was quadratic: findIndex per tag)',
    fn: sanitizeDraft,
    at: tags,
    baseline: (d) => d.tags.map(baseline),
  });
  const rows = [];
  for (const c of cases) {
    const one = c.at(1);
    const two = c.at(2);
    const [t1, t2] = perCall(c.fn, [one, two]);
    const [b1, b2] = perCall(c.baseline ?? baseline, [one, two]);
    const scaling = t2 === null ? null : +(t2 / t1).toFixed(2);
    rows.push({
      name: c.name,
      ms1x: +t1.toFixed(3),
      ms2x: t2 === null ? null : +t2.toFixed(3),
      scaling,
      baselineScaling: +(b2 / b1).toFixed(2),
      vsBaseline1x: +(t1 / b1).toFixed(1),
      ok: scaling !== null && scaling < MAX_SCALING,
    });
  }
  console.log('');
  console.log(
    table(
      ['adversarial input', 'ms at 1x', 'ms at 2x', '2x / 1x', 'baseline 2x / 1x', '× baseline at 1x', ''],
      rows.map((r) => [
        r.name,
        r.ms1x,
        r.ms2x ?? `> ${TOO_SLOW_MS} at 1x`,
        r.scaling ?? '-',
        r.baselineScaling ?? '-',
        r.vsBaseline1x,
        r.ok ? 'ok' : 'SUPER-LINEAR',
      ]),
    ),
  );
  const worst = Math.max(...rows.map((r) => r.scaling ?? Infinity));
  const met = rows.every((r) => r.ok);
  console.log('');
  console.log(`worst 2x / 1x: ${worst} (target < ${MAX_SCALING}; linear ≈ 2, quadratic ≈ 4) ${met ? 'ok' : 'MISSED'}`);

  saveResult('sanitize', {
    at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      node: process.version,
      loadavgBefore: loadBefore.map((l) => +l.toFixed(2)),
      loadavgAfter: loadavg().map((l) => +l.toFixed(2)),
    },
    settings: { inputs: INPUTS, kb: KB, maxScaling: MAX_SCALING },
    random,
    adversarial: rows,
    worstScaling: worst,
    met,
  });
  return met;
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
