// Seeds the listing benchmark's data set straight in SQL (generate_series, one statement per project):
// 100,000 live articles with ~2 KB bodies, 85,000 of them in one project, the rest in 5 other accounts.
//
//   DATABASE_URL=postgres://... node bench/articles-seed.mjs
//
// Exported for bench/list-articles.bench.mjs, which seeds a fresh embedded database itself.
import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** Words of the titles (two per title): `search` in the bench looks for one of them, in about 2% of the titles. */
export const WORDS = Array.from({ length: 100 }, (_, i) => `topic${String(i).padStart(2, '0')}`);
export const SEARCH_TERM = 'topic42';

const BIG = 85_000;
const OTHERS = [3_000, 3_000, 3_000, 3_000, 3_000];

/**
 * Inserts the data set; returns the big project's ids. `generate_series` builds each project's rows
 * inside Postgres, so 100k rows of 2 KB take seconds, not a round trip each.
 */
export async function seedArticles(url, { log = console.log } = {}) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const big = await seedProject(client, 'bench-big', BIG, log);
    for (const [i, n] of OTHERS.entries()) await seedProject(client, `bench-other-${i + 1}`, n, log);
    log('vacuum analyze articles');
    // A steady-state table: visibility map set (index-only scans), planner statistics fresh.
    await client.query('VACUUM ANALYZE articles');
    await client.query('VACUUM ANALYZE article_counts');
    return big;
  } finally {
    await client.end();
  }
}

async function seedProject(client, name, n, log) {
  const accountId = randomUUID();
  const projectId = randomUUID();
  log(`seeding ${n} articles in ${name}`);
  await client.query('BEGIN');
  await client.query(`INSERT INTO accounts (id, name, owner_email) VALUES ($1, $2, $3)`, [accountId, name, `${name}@bench.invalid`]);
  await client.query(`INSERT INTO projects (id, account_id, name) VALUES ($1, $2, $3)`, [projectId, accountId, name]);
  // Statuses: 60% published, 30% draft, 5% scheduled (far in the future), 5% archived.
  // Bodies: 62 md5 hex words (~2 KB) that differ per row, so TOAST compression does not make them tiny.
  await client.query(
    `INSERT INTO articles (id, account_id, project_id, handle, title, excerpt, body, status, tags, published_at, created_at, updated_at, version)
     SELECT gen_random_uuid(), $1, $2,
            'bench-article-' || i,
            'Bench article ' || i || ' on ' || ($4::text[])[1 + (i::bigint * 7919) % 100] || ' and ' || ($4::text[])[1 + (i::bigint * 104729) % 100],
            'A short excerpt of article ' || i || '.',
            (SELECT string_agg(md5(i::text || ':' || j::text), ' ') FROM generate_series(1, 62) j),
            s.status,
            ARRAY['tag' || (i % 50), 'tag' || ((i * 31) % 50)],
            CASE s.status WHEN 'published' THEN now() - i * interval '1 minute' WHEN 'scheduled' THEN now() + interval '365 days' + i * interval '1 minute' END,
            now() - i * interval '1 minute',
            now() - i * interval '1 minute' + (i % 7) * interval '1 second',
            1
       FROM generate_series(1, $3::int) i
       CROSS JOIN LATERAL (SELECT CASE WHEN i % 20 < 12 THEN 'published' WHEN i % 20 < 18 THEN 'draft' WHEN i % 20 = 18 THEN 'scheduled' ELSE 'archived' END AS status) s`,
    [accountId, projectId, n, WORDS],
  );
  await client.query('COMMIT');
  return { accountId, projectId, articles: n };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('Set DATABASE_URL to a migrated database.');
    process.exit(1);
  }
  const started = Date.now();
  const big = await seedArticles(url);
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s; big project ${big.projectId} of account ${big.accountId}`);
}
