// npm run conformance: builds the conformance entry point (test/conformance/main.ts: the server plus
// the suite's fixture tools, prompts and resources, into dist/conformance), starts it on a free port
// and a fresh data directory, and runs the official MCP conformance suite's server scenarios against
// it under Node 24 from npm (the suite needs Node 22 or later; see scripts/node-lts.mjs):
//
//   1. `conformance server --requirements <revision>` of the 0.2.0-alpha line, for each revision served
//      (2025-11-25: initialize and sessions; 2026-07-28: stateless, `_meta` and the revision's headers):
//      every scenario the revision requires (scored) and those it runs without scoring (reported, never
//      failing the run);
//   2. the 0.1.16 release's scenarios this server passed before (kept until 0.2 is released);
//   3. the MCP Inspector CLI's `tools/list --strict` (the portability of every tool's input and output
//      schema, as clients that map them onto narrower dialects need): no finding at all, warnings included.
//
// Prints one line per scenario; exits non-zero if a scored scenario fails or the Inspector finds anything.
//
//   CONFORMANCE_NODE=/path/to/node     use this Node >= 22 instead of the one from npm
//   CONFORMANCE_INSPECTOR=/path/to/dir the @modelcontextprotocol/inspector package to use instead of node_modules'
//   CONFORMANCE_SKIP_BUILD=true        reuse dist/conformance as it is
//   CONFORMANCE_SCENARIOS=a,b          run only these scenarios (of either suite)
//   CONFORMANCE_VERBOSE=true           show the suite's own output
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeLts } from './node-lts.mjs';
import { ROOT, run, startServer } from './lib/server.mjs';

/** The scenarios of the 0.1.16 release this server passed before the 0.2 line (run with that release). */
const LEGACY_SCENARIOS = [
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
/** The revisions whose requirement sets are run, each against the same server. */
const REVISIONS = ['2025-11-25', '2026-07-28'];
const SUITE = '@modelcontextprotocol/conformance';
const LEGACY_SUITE = 'conformance-0.1';
const ONLY = process.env.CONFORMANCE_SCENARIOS ? new Set(process.env.CONFORMANCE_SCENARIOS.split(',').map((s) => s.trim())) : null;
// The production build (tsconfig.build.json) holds no fixture code: this entry point has its own.
const TSCONFIG = 'tsconfig.conformance.json';
const ENTRY = 'dist/conformance/test/conformance/main.js';

const INSPECTOR = '@modelcontextprotocol/inspector';
const inspectorDir = () => process.env.CONFORMANCE_INSPECTOR ?? join(ROOT, 'node_modules', INSPECTOR);

const suiteVersion = (pkg) => JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version;
const suiteMain = (pkg) => join(ROOT, 'node_modules', pkg, 'dist/index.js');

/** The scenarios a revision scores, and those it runs without scoring, from the suite's own requirement file. */
function requirements(revision) {
  const text = readFileSync(join(ROOT, 'node_modules', SUITE, 'requirements', `${revision}.yaml`), 'utf8');
  const scored = [];
  const notScored = new Map();
  let section = null;
  let pending = null;
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) section = line.replace(/:.*$/, '');
    let m;
    if (section === 'server' && (m = /^ {2}- (\S+)\s*$/.exec(line))) scored.push(m[1]);
    if (section === 'not_scored' && (m = /^ {2}- scenario: (\S+)/.exec(line))) pending = { scenario: m[1] };
    if (section === 'not_scored' && pending && (m = /^ {4}leg: (\S+)/.exec(line))) pending.leg = m[1];
    if (section === 'not_scored' && pending && (m = /^ {4}reason: (\S+)/.exec(line))) {
      if (pending.leg === 'server') notScored.set(pending.scenario, m[1]);
      pending = null;
    }
  }
  if (!scored.length) throw new Error(`No server scenarios found in ${SUITE}'s requirements/${revision}.yaml`);
  return { scored, notScored };
}

/** Every result the suite wrote: <output>/server-<scenario>-<timestamp>/checks.json. */
function readResults(outputDir) {
  const results = new Map();
  for (const entry of readdirSync(outputDir)) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry);
    if (m) results.set(m[1], JSON.parse(readFileSync(join(outputDir, entry, 'checks.json'), 'utf8')));
  }
  return results;
}

function summarise(scenario, checks) {
  const count = (status) => (checks ?? []).filter((c) => c.status === status).length;
  const failures = (checks ?? []).filter((c) => c.status === 'FAILURE').map((c) => `${c.id ?? c.name}: ${c.errorMessage ?? c.description}`);
  if (!checks) failures.push('no result written');
  return {
    scenario,
    passed: !!checks && count('SUCCESS') > 0 && failures.length === 0,
    success: count('SUCCESS'),
    failure: count('FAILURE'),
    warning: count('WARNING'),
    failures,
  };
}

async function runSuite(node, server, pkg, args) {
  const outputDir = mkdtempSync(join(tmpdir(), 'conformance-results-'));
  try {
    await run(node, ['--import', join(ROOT, 'scripts/conformance-auth.mjs'), suiteMain(pkg), 'server', '--url', server.url, ...args, '-o', outputDir], {
      env: { ...process.env, CONFORMANCE_BEARER: server.key, CONFORMANCE_TARGET: server.origin, CONFORMANCE_SUITE: pkg },
      stdio: ['ignore', process.env.CONFORMANCE_VERBOSE === 'true' ? 'inherit' : 'ignore', 'inherit'],
    }).catch(() => undefined); // judged by the checks each scenario wrote, below
    return readResults(outputDir);
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

/**
 * `inspector --cli <url> --method tools/list --strict --format json`: its JSON envelope carries
 * `schemaFindings` when it found anything (warnings too; its exit code only counts errors).
 */
function inspectSchemas(node, server) {
  const dir = inspectorDir();
  if (!existsSync(join(dir, 'package.json')))
    throw new Error(`${INSPECTOR} is not in ${dir}: run npm install (it is a devDependency), or set CONFORMANCE_INSPECTOR.`);
  const { version, bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const cli = join(dir, typeof bin === 'string' ? bin : bin.inspector);
  const args = [
    cli,
    '--cli',
    server.url,
    '--transport',
    'http',
    '--header',
    `Authorization: Bearer ${server.key}`,
    '--method',
    'tools/list',
    '--strict',
    '--format',
    'json',
  ];
  let stdout;
  try {
    stdout = execFileSync(node, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    stdout = err.stdout ?? '';
    if (!stdout.trim()) throw new Error(`The MCP Inspector CLI failed: ${err.stderr || err.message}`);
  }
  const envelope = JSON.parse(stdout);
  const tools = envelope.result?.tools?.length ?? 0;
  const findings = (envelope.schemaFindings ?? []).flatMap(({ toolName, findings }) =>
    findings.map((f) => `${f.severity} ${toolName} ${f.schema}${f.path ? `.${f.path}` : ''}: ${f.rule}`),
  );
  return { title: `${INSPECTOR} ${version}, tools/list --strict:`, tools, findings };
}

function report(title, rows) {
  console.log(`\n${title}`);
  for (const row of rows) {
    const label = row.reason ? `(not scored: ${row.reason})` : row.passed ? 'PASS' : 'FAIL';
    const mark = row.reason ? (row.success + row.failure + row.warning === 0 ? 'none' : row.passed ? 'pass' : 'fail') : label;
    console.log(
      `${mark.padEnd(5)} ${row.scenario.padEnd(32)} ${row.success} passed, ${row.failure} failed, ${row.warning} warnings${row.reason ? `  ${label}` : ''}`,
    );
    for (const line of row.failures) console.log(`        ${line}`);
  }
}

async function main() {
  const started = Date.now();
  if (process.env.CONFORMANCE_SKIP_BUILD !== 'true') await run('npx', ['tsc', '-p', TSCONFIG]);
  const node = process.env.CONFORMANCE_NODE ?? nodeLts();
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const wanted = (scenario) => !ONLY || ONLY.has(scenario);
  const server = await startServer({ entry: ENTRY, env: { CONFORMANCE_FIXTURES: 'true' } });
  const scoredRows = [];
  try {
    console.log(`Server ready at ${server.url}; running the MCP conformance suite under Node ${version}`);
    // 1. Each revision's requirement set (the suite runs them at the revision's wire version).
    for (const revision of REVISIONS) {
      const { scored, notScored } = requirements(revision);
      const selected = [...scored, ...notScored.keys()].filter(wanted);
      if (!selected.length) continue;
      // The whole set in one run; a filtered run takes the scenarios one by one (the suite runs one --scenario at a time).
      const results = ONLY ? new Map() : await runSuite(node, server, SUITE, ['--requirements', revision]);
      // An extension's scenario is off the revision's timeline: the suite runs it alone only when forced.
      const force = (s) => (notScored.get(s) === 'extension' ? ['--force'] : []);
      if (ONLY)
        for (const s of selected)
          for (const [k, v] of await runSuite(node, server, SUITE, ['--scenario', s, '--spec-version', revision, ...force(s)])) results.set(k, v);
      const rows = selected.map((s) => ({ ...summarise(s, results.get(s)), reason: notScored.get(s) }));
      scoredRows.push(...rows.filter((r) => !r.reason).map((r) => ({ ...r, scenario: `${r.scenario} (${revision})` })));
      report(`${SUITE} ${suiteVersion(SUITE)}, --requirements ${revision}:`, rows);
    }
    // 2. The release's scenarios, with the release.
    const legacy = LEGACY_SCENARIOS.filter(wanted);
    if (legacy.length) {
      const results = new Map();
      for (const s of legacy) for (const [k, v] of await runSuite(node, server, LEGACY_SUITE, ['--scenario', s])) results.set(k, v);
      const rows = legacy.map((s) => summarise(s, results.get(s)));
      scoredRows.push(...rows.map((r) => ({ ...r, scenario: `${r.scenario} (${suiteVersion(LEGACY_SUITE)})` })));
      report(`${SUITE} ${suiteVersion(LEGACY_SUITE)} (the release):`, rows);
    }
    // 3. The Inspector's schema lint, on every run.
    const lint = inspectSchemas(node, server);
    const row = {
      scenario: 'tools-schema-portability',
      passed: lint.tools > 0 && lint.findings.length === 0,
      success: lint.tools,
      failure: lint.findings.length,
      warning: 0,
      failures: lint.findings,
    };
    scoredRows.push(row);
    console.log(`\n${lint.title}\n${row.passed ? 'PASS ' : 'FAIL '} ${lint.tools} tools listed, ${lint.findings.length} findings`);
    for (const line of lint.findings) console.log(`        ${line}`);
  } finally {
    await server.stop();
  }
  const failed = scoredRows.filter((r) => !r.passed);
  const checks = scoredRows.reduce((n, r) => n + r.success, 0);
  console.log(
    `\nConformance: ${scoredRows.length - failed.length}/${scoredRows.length} scored scenarios passed (${checks} checks) in ${Math.round((Date.now() - started) / 1000)} s${failed.length ? `; failed: ${failed.map((r) => r.scenario).join(', ')}` : ''}.`,
  );
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
