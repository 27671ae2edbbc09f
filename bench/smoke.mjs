// Every bench once, at its smallest (`npm run bench:smoke`, run by CI): a bench that no longer runs
// (a setting the server now requires, a renamed file) is found by CI rather than by the next person
// who measures with it. Nothing is measured here: a bench's own verdict (exit 1 when a target is
// missed, which tiny runs often are) does not count; what counts is that it got to the end and saved
// its results. They go to a file of their own (BENCH_RESULTS_FILE), leaving bench/results/latest.json
// as it was. The first bench builds the app and the conformance entry point; the rest reuse them.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../scripts/lib/server.mjs';

/** Each bench's limit: the slowest takes about a minute here. */
const LIMIT_MS = 5 * 60_000;
const SHORT = { BENCH_ROUNDS: '1', BENCH_DURATION: '1', BENCH_WARMUP: '0', BENCH_CONNECTIONS: '10' };

/** [npm script, key it saves, settings]: the protocol bench first, as it builds what the others reuse. */
const BENCHES = [
  ['bench', 'protocol', { ...SHORT, BENCH_SKIP_BUILD: 'false' }],
  ['bench:articles', 'articles', SHORT],
  ['bench:activity', 'activity', { ...SHORT, BENCH_ACTIVITY_ROWS: '2000' }],
  ['bench:console-activity', 'consoleActivity', { BENCH_ROWS: '2000', BENCH_ROUNDS: '1' }],
  ['bench:memory', 'memory', { BENCH_REQUESTS: '2000', BENCH_CONNECTIONS: '10' }],
  ['bench:jobs', 'jobs', { BENCH_JOBS: '20', BENCH_PROJECTS: '2', BENCH_FAIR_BACKLOG: '10' }],
  ['bench:context', 'context', { BENCH_CONTEXT_ARTICLES: '5', BENCH_CONTEXT_BODY_KB: '4', BENCH_CONTEXT_CALLS: '2' }],
  ['bench:tracing', 'tracing', { ...SHORT, BENCH_PAUSE: '0' }],
  ['bench:retention', 'retention', { ...SHORT, BENCH_ROWS: '100000' }],
  ['bench:sanitize', 'sanitize', { BENCH_SANITIZE_INPUTS: '200', BENCH_SANITIZE_KB: '5' }],
  ['bench:express', 'express', SHORT],
  ['bench:catalogue', 'catalogue', { ...SHORT, BENCH_PROJECTS: '50' }],
  ['bench:quiet', 'quiet', { BENCH_ROUNDS: '1', BENCH_QUIET: '1' }],
  ['bench:syscalls', 'syscalls', { BENCH_REQUESTS: '500', BENCH_CONNECTIONS: '10' }],
];

// A bench added to package.json but not here would never be run: say so rather than pass without it.
const scripts = Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts);
const unlisted = scripts.filter((name) => /^bench(:|$)/.test(name) && name !== 'bench:smoke' && !BENCHES.some(([script]) => script === name));
if (unlisted.length) {
  console.log(`Not in bench/smoke.mjs's list (add each with its smallest settings): ${unlisted.join(', ')}`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'reblog-bench-smoke-'));
const resultsFile = join(dir, 'results.json');
const failed = [];
try {
  for (const [script, key, settings] of BENCHES) {
    const started = performance.now();
    const { code, output } = await runScript(script, { BENCH_SKIP_BUILD: 'true', ...settings, BENCH_RESULTS_FILE: resultsFile });
    const saved = existsSync(resultsFile) && key in JSON.parse(readFileSync(resultsFile, 'utf8'));
    // 0: every target met; 1: one missed (or the bench failed, told apart by whether it saved its results).
    const ok = saved && (code === 0 || code === 1);
    console.log(
      `${ok ? 'ran   ' : 'FAILED'} npm run ${script} (${((performance.now() - started) / 1000).toFixed(0)} s, exit ${code}${saved ? '' : `, no "${key}" saved`})`,
    );
    if (!ok) {
      failed.push(script);
      console.log(output.split('\n').slice(-40).join('\n'));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed.length) {
  console.log(`\n${failed.length} bench(es) did not run to the end: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`\nEvery bench ran to the end (${BENCHES.length}).`);

/**
 * Runs `npm run <script>` with `env` added, its output kept (shown when it fails), in a process group of its
 * own: one that runs past {@link LIMIT_MS} is stopped with everything it started (SIGTERM, which the benches
 * clean up on, then SIGKILL). Resolves to its exit code (or signal) and output.
 */
function runScript(script, env) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const signalGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // gone already
      }
    };
    const limit = setTimeout(() => {
      output += `\n(stopped after ${LIMIT_MS / 1000} s)`;
      signalGroup('SIGTERM');
      setTimeout(() => signalGroup('SIGKILL'), 10_000).unref();
    }, LIMIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      resolve({ code: code ?? signal, output });
    });
  });
}
