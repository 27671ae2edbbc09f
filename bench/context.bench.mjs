// The writer's setup context (project_context of write_article's "setup_required" answer), in one run:
//
//   big          a project of BENCH_CONTEXT_ARTICLES articles (500, what the context reads) of BENCH_CONTEXT_BODY_KB
//                (1024) each, of crafted text: one-letter words ("a a a ...", 524,288 words per MiB, the most a
//                regex word count can be made to match; compressible) and random letters (incompressible, so TOASTed
//                uncompressed), half each
//   small        the baseline beside it: a project of as many articles of about 2 KB of prose
//
// Both are measured through the built server: tools/call write_article in a project without a writer config,
// sequentially (BENCH_CONTEXT_CALLS each):
//   cold         before each call the bench writes to one of the project's articles (as an editor could between
//                calls), so the cached context is stale and computed again
//   warm         no write between calls: the cached context, after one read of the project's generation
// and the same on the database alone: the statement that reads the sample now, against the one it replaced (the
// word count of every body by regexp_matches), which runs under the server's statement timeout (15 s).
//
// Prints a table and the ratios big / small; writes bench/results/latest.json (key "context"). Exit code 1 when the
// cold big / small latency ratio is above BENCH_CONTEXT_MAX_RATIO (2): the cost must not follow the size of the bodies.
//
//   BENCH_CONTEXT_ARTICLES=500
//   BENCH_CONTEXT_BODY_KB=1024
//   BENCH_CONTEXT_CALLS=30
//   BENCH_CONTEXT_MAX_RATIO=2
//   BENCH_SKIP_BUILD=true  reuse dist/ as it is
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { atCleanup, build, median, runMain, saveResult, startDatabase, startProductionServer } from './lib/bench.mjs';

const ARTICLES = Number(process.env.BENCH_CONTEXT_ARTICLES ?? 500);
const BODY_KB = Number(process.env.BENCH_CONTEXT_BODY_KB ?? 1024);
const CALLS = Number(process.env.BENCH_CONTEXT_CALLS ?? 30);
const MAX_RATIO = Number(process.env.BENCH_CONTEXT_MAX_RATIO ?? 2);
const OLD_TIMEOUT_MS = 15_000;
const ADMIN_TOKEN = 'bench-admin-' + randomBytes(12).toString('hex');

/** Crafted bodies of about `bytes`: one-letter words, or random letters and spaces from a seeded generator. */
function craftedBody(i, bytes) {
  if (i % 2 === 0) return 'a '.repeat(Math.floor(bytes / 2));
  let seed = i * 2654435761;
  const chars = new Array(bytes);
  for (let k = 0; k < bytes; k++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const r = seed >>> 16;
    chars[k] = r % 4 === 0 ? ' ' : String.fromCharCode(97 + (r % 26));
  }
  return chars.join('');
}

const PROSE =
  'The garden is a source of joy for the children and the parents. We planted tomatoes in the bed, and this is what they need from you to grow with the sun. ';

async function admin(origin, method, path, body) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const p90 = (values) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.9))];

async function main() {
  const loadBefore = loadavg();
  console.log(
    `context bench: ${cpus().length} CPUs (load average ${loadBefore[0].toFixed(1)}), node ${process.version}, ${ARTICLES} articles of ${BODY_KB} KB vs ${ARTICLES} of ~2 KB, ${CALLS} calls per target`,
  );
  await build();
  const database = await startDatabase('context');
  atCleanup(database.stop);
  const { db } = database;
  const { origin } = await startProductionServer(database, ADMIN_TOKEN);
  const account = await admin(origin, 'POST', '/admin/v1/accounts', { name: 'bench', owner_email: 'bench@bench.invalid' });
  const big = await admin(origin, 'POST', `/admin/v1/accounts/${account.id}/projects`, { name: 'big' });
  const small = await admin(origin, 'POST', `/admin/v1/accounts/${account.id}/projects`, { name: 'small' });
  const { key } = await admin(origin, 'POST', `/admin/v1/accounts/${account.id}/api-keys`, {
    name: 'bench',
    scopes: ['read', 'write', 'generate'],
    projects: [big, small].map((p) => ({ project_id: p.id, role: 'editor' })),
  });

  // Seed straight in SQL on two connections (the word count trigger counts each body once, here).
  const seedStarted = performance.now();
  const insert = `INSERT INTO articles (id, account_id, project_id, handle, title, body, status, tags, updated_at)
                  VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, 'published', $6, now() - $7 * interval '1 second')`;
  const seedOn = async (indexes) => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      for (const i of indexes) {
        await client.query(insert, [account.id, big.id, `big-${i}`, `Crafted ${i}`, craftedBody(i, BODY_KB * 1024), ['crafted', `t${i % 7}`], i]);
        await client.query(insert, [account.id, small.id, `small-${i}`, `Prose ${i}`, PROSE.repeat(14), ['garden', `t${i % 7}`], i]);
      }
    } finally {
      await client.end();
    }
  };
  const all = Array.from({ length: ARTICLES }, (_, i) => i);
  await Promise.all([seedOn(all.filter((i) => i % 2 === 0)), seedOn(all.filter((i) => i % 2 === 1))]);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  atCleanup(() => client.end());
  await client.query('VACUUM ANALYZE articles');
  const sizes = (
    await client.query(`SELECT project_id, sum(octet_length(body))::bigint AS bytes, sum(pg_column_size(body))::bigint AS stored FROM articles GROUP BY 1`)
  ).rows;
  const mib = (id) => (Number(sizes.find((s) => s.project_id === id).bytes) / 2 ** 20).toFixed(1);
  console.log(`seeded in ${seedSeconds.toFixed(1)} s: big ${mib(big.id)} MiB of text, small ${mib(small.id)} MiB`);

  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` };
  const body = (projectId) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_article', arguments: { project_id: projectId, brief: 'x' } } });
  const call = async (projectId) => {
    const started = performance.now();
    const res = await fetch(`${origin}/mcp`, { method: 'POST', headers, body: body(projectId) });
    const json = await res.json();
    const ms = performance.now() - started;
    const answer = json.result?.structuredContent;
    if (answer?.status !== 'setup_required') throw new Error(`write_article answered ${JSON.stringify(json).slice(0, 500)}`);
    return { ms, context: answer.project_context };
  };
  // A write to one article of the project between calls: its generation moves, the cached context is stale.
  const touch = (projectId) => client.query(`UPDATE articles SET tags = tags WHERE id = (SELECT id FROM articles WHERE project_id = $1 LIMIT 1)`, [projectId]);

  const first = { big: await call(big.id), small: await call(small.id) };
  const expectWords = Math.floor((BODY_KB * 1024) / 2);
  if (first.big.context.article_count !== ARTICLES || first.small.context.article_count !== ARTICLES)
    throw new Error(`Unexpected context: ${JSON.stringify(first)}`);
  console.log(
    `big: median_word_count ${first.big.context.median_word_count} (one-letter bodies: ${expectWords} words), languages ${JSON.stringify(first.big.context.languages)}; small: ${first.small.context.median_word_count}`,
  );

  // Interleaved: big, small, big, small... so load on the shared machine hits both alike.
  const measure = async (cold) => {
    const out = { big: [], small: [] };
    for (let i = 0; i < CALLS; i++) {
      for (const [name, project] of [
        ['big', big],
        ['small', small],
      ]) {
        if (cold) await touch(project.id);
        out[name].push((await call(project.id)).ms);
      }
    }
    return out;
  };
  const cold = await measure(true);
  const warm = await measure(false);

  // The database alone: the statement that reads the sample now, and the one it replaced.
  const statement = async (sql, projectId, timeoutMs) => {
    await client.query(`SET statement_timeout = ${timeoutMs}`);
    const started = performance.now();
    try {
      await client.query(sql, [account.id, projectId, 500]);
      return { ms: performance.now() - started, timedOut: false };
    } catch (err) {
      if (!/statement timeout/.test(String(err.message))) throw err;
      return { ms: performance.now() - started, timedOut: true };
    } finally {
      await client.query(`SET statement_timeout = 0`);
    }
  };
  const NEW = `SELECT title, tags, left(body, 3000) AS body_head, word_count FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT $3`;
  const OLD = `SELECT title, tags, left(body, 3000) AS body_head, (SELECT count(*)::int FROM regexp_matches(body, '[^[:space:][:punct:]]+', 'g')) AS word_count
                 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT $3`;
  const sql = {};
  for (const [name, text] of [
    ['new', NEW],
    ['old', OLD],
  ]) {
    for (const [size, project] of [
      ['big', big],
      ['small', small],
    ]) {
      const runs = [];
      for (let i = 0; i < (name === 'old' && size === 'big' ? 1 : 5); i++) runs.push(await statement(text, project.id, OLD_TIMEOUT_MS));
      sql[`${name}_${size}`] = { ms: +median(runs.map((r) => r.ms)).toFixed(1), timedOut: runs.some((r) => r.timedOut) };
    }
  }

  const row = (name, values) => ({ name, medianMs: +median(values).toFixed(1), p90Ms: +p90(values).toFixed(1) });
  const rows = [
    row(`cold, big (crafted ${BODY_KB} KB bodies)`, cold.big),
    row('cold, small (baseline)', cold.small),
    row('warm, big', warm.big),
    row('warm, small', warm.small),
  ];
  const ratios = {
    coldBigVsSmall: +(median(cold.big) / median(cold.small)).toFixed(2),
    warmBigVsSmall: +(median(warm.big) / median(warm.small)).toFixed(2),
    warmVsColdBig: +(median(warm.big) / median(cold.big)).toFixed(2),
    sampleStatementBigVsSmall: +(sql.new_big.ms / sql.new_small.ms).toFixed(2),
    oldStatementBigVsNew: +(sql.old_big.ms / sql.new_big.ms).toFixed(0),
  };
  console.log('');
  const widths = [40, 10, 8];
  console.log(['write_article, no writer config'.padEnd(widths[0]), 'median ms'.padStart(widths[1]), 'p90 ms'.padStart(widths[2])].join('  '));
  for (const r of rows) console.log([r.name.padEnd(widths[0]), String(r.medianMs).padStart(widths[1]), String(r.p90Ms).padStart(widths[2])].join('  '));
  console.log('');
  const fmt = (s) => `${s.ms} ms${s.timedOut ? ' (statement timeout)' : ''}`;
  console.log(`sample statement now:      big ${fmt(sql.new_big)}, small ${fmt(sql.new_small)}`);
  console.log(`statement it replaced:     big ${fmt(sql.old_big)}, small ${fmt(sql.old_small)}`);
  console.log('');
  console.log(`cold big / small: ${ratios.coldBigVsSmall} (target ≤ ${MAX_RATIO}) ${ratios.coldBigVsSmall <= MAX_RATIO ? 'ok' : 'MISSED'}`);
  console.log(`warm big / small: ${ratios.warmBigVsSmall}; warm / cold (big): ${ratios.warmVsColdBig}`);
  console.log(
    `sample statement big / small: ${ratios.sampleStatementBigVsSmall}; replaced statement (big) / sample statement (big): ${ratios.oldStatementBigVsNew}`,
  );
  const met = ratios.coldBigVsSmall <= MAX_RATIO;

  saveResult('context', {
    at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      node: process.version,
      loadavgBefore: loadBefore.map((l) => +l.toFixed(2)),
      loadavgAfter: loadavg().map((l) => +l.toFixed(2)),
    },
    settings: { articles: ARTICLES, bodyKb: BODY_KB, calls: CALLS, maxRatio: MAX_RATIO, seedSeconds: +seedSeconds.toFixed(1) },
    results: rows,
    statements: sql,
    ratios,
    met,
  });
  return met;
}

runMain(main);
