// npm run conformance: builds the conformance entry point (test/conformance/main.ts: the server plus
// the suite's fixture tools, into dist/conformance), starts it on a free port and a fresh data
// directory, and runs the official MCP conformance suite (server scenarios) against it under Node 24
// from npm (the suite needs Node 22 or later; see scripts/node-lts.mjs). Prints a summary; exits
// non-zero if any check fails.
//
//   CONFORMANCE_NODE=/path/to/node     use this Node >= 22 instead of the one from npm
//   CONFORMANCE_SKIP_BUILD=true        reuse dist/conformance as it is
//   CONFORMANCE_JOBS=4                 scenarios run at the same time
//   CONFORMANCE_VERBOSE=true           show the suite's own output
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeLts } from './node-lts.mjs';
import { ROOT, run, startServer } from './lib/server.mjs';

const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'dns-rebinding-protection',
];

const JOBS = Math.max(1, Number(process.env.CONFORMANCE_JOBS ?? 4));
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
// The production build (tsconfig.build.json) holds no fixture code: this entry point has its own.
const TSCONFIG = 'tsconfig.conformance.json';
const ENTRY = 'dist/conformance/test/conformance/main.js';

function readChecks(outputDir, scenario) {
  // The suite writes <output>/server-<scenario>-<timestamp>/checks.json.
  const entry = readdirSync(outputDir).find((name) => name.startsWith(`server-${scenario}-`));
  return entry ? JSON.parse(readFileSync(join(outputDir, entry, 'checks.json'), 'utf8')) : [];
}

async function main() {
  const started = Date.now();
  if (process.env.CONFORMANCE_SKIP_BUILD !== 'true') await run('npx', ['tsc', '-p', TSCONFIG]);
  const node = process.env.CONFORMANCE_NODE ?? nodeLts();
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const server = await startServer({ entry: ENTRY });
  const outputDir = mkdtempSync(join(tmpdir(), 'conformance-results-'));
  const rows = [];
  try {
    console.log(`Server ready at ${server.url}; running ${SCENARIOS.length} scenarios of @modelcontextprotocol/conformance under Node ${version}\n`);
    const runScenario = async (scenario) => {
      let exitOk = true;
      try {
        await run(node, ['--import', join(ROOT, 'scripts/conformance-auth.mjs'), SUITE, 'server', '--url', server.url, '--scenario', scenario, '-o', outputDir], {
          env: { ...process.env, CONFORMANCE_BEARER: server.key, CONFORMANCE_TARGET: server.origin },
          stdio: ['ignore', process.env.CONFORMANCE_VERBOSE === 'true' ? 'inherit' : 'ignore', 'inherit'],
        });
      } catch {
        exitOk = false;
      }
      const checks = readChecks(outputDir, scenario);
      const count = (status) => checks.filter((c) => c.status === status).length;
      const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.name}: ${c.errorMessage ?? c.description}`);
      return { scenario, passed: exitOk && count('SUCCESS') > 0 && failures.length === 0, success: count('SUCCESS'), failure: count('FAILURE'), warning: count('WARNING'), failures };
    };
    // The scenarios are independent: a few at a time, reported in order.
    const pending = SCENARIOS.map((scenario) => ({ scenario, result: null }));
    let next = 0;
    const worker = async () => {
      while (next < pending.length) {
        const item = pending[next++];
        item.result = await runScenario(item.scenario);
      }
    };
    await Promise.all(Array.from({ length: JOBS }, worker));
    for (const { result: row } of pending) {
      rows.push(row);
      console.log(`${row.passed ? 'PASS' : 'FAIL'}  ${row.scenario.padEnd(30)} ${row.success} passed, ${row.failure} failed, ${row.warning} warnings`);
      for (const line of row.failures) console.log(`        ${line}`);
    }
  } finally {
    await server.stop();
    rmSync(outputDir, { recursive: true, force: true });
  }
  const failed = rows.filter((r) => !r.passed);
  const checks = rows.reduce((n, r) => n + r.success, 0);
  console.log(`\nConformance: ${rows.length - failed.length}/${rows.length} scenarios passed (${checks} checks) in ${Math.round((Date.now() - started) / 1000)} s${failed.length ? `; failed: ${failed.map((r) => r.scenario).join(', ')}` : ''}.`);
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
