-- articles.context_stamp
SELECT n::int AS total, generation::text AS generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*';

-- articles.filter_count_by_status_search
SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND (lower(title) LIKE $4 OR handle LIKE $4) LIMIT $5) m;

-- articles.filter_count_by_status_search_tag
SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND (lower(title) LIKE $4 OR handle LIKE $4) AND tags @> $5::text[] LIMIT $6) m;

-- articles.filter_count_by_status_tag
SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND tags @> $4::text[] LIMIT $5) m;

-- articles.filter_count_search
SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND (lower(title) LIKE $3 OR handle LIKE $3) LIMIT $4) m;

-- articles.filter_count_search_tag
SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND (lower(title) LIKE $3 OR handle LIKE $3) AND tags @> $4::text[] LIMIT $5) m;

-- articles.filter_count_tag
SELECT count(*)::int AS counted FROM (SELECT 1 FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND tags @> $3::text[] LIMIT $4) m;

-- articles.filter_page_by_status_search
SELECT a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version FROM articles a WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND (lower(title) LIKE $4 OR handle LIKE $4) ORDER BY updated_at DESC, id DESC LIMIT $5 OFFSET $6;

-- articles.filter_page_by_status_search_tag
SELECT a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version FROM articles a WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND (lower(title) LIKE $4 OR handle LIKE $4) AND tags @> $5::text[] ORDER BY updated_at DESC, id DESC LIMIT $6 OFFSET $7;

-- articles.filter_page_by_status_tag
SELECT a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version FROM articles a WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND tags @> $4::text[] ORDER BY updated_at DESC, id DESC LIMIT $5 OFFSET $6;

-- articles.filter_page_search
SELECT a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version FROM articles a WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND (lower(title) LIKE $3 OR handle LIKE $3) ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5;

-- articles.filter_page_search_tag
SELECT a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version FROM articles a WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND (lower(title) LIKE $3 OR handle LIKE $3) AND tags @> $4::text[] ORDER BY updated_at DESC, id DESC LIMIT $5 OFFSET $6;

-- articles.filter_page_tag
SELECT a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version FROM articles a WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND tags @> $3::text[] ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5;

-- articles.find_by_handle
SELECT * FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND handle = $3;

-- articles.find_by_id
SELECT * FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND id = $3;

-- articles.list_anchors
WITH r AS (
  SELECT updated_at, id, row_number() OVER (ORDER BY updated_at DESC, id DESC) AS rn
    FROM articles WHERE project_id = $2 AND deleted_at IS NULL
)
SELECT (SELECT generation::text FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*') AS generation,
       r.updated_at::text AS updated_at, r.id
  FROM (SELECT 1) one LEFT JOIN r ON r.rn % $3 = 1 AND r.rn > 1
 ORDER BY r.rn;

-- articles.list_anchors_by_status
WITH r AS (
  SELECT updated_at, id, row_number() OVER (ORDER BY updated_at DESC, id DESC) AS rn
    FROM articles WHERE project_id = $2 AND deleted_at IS NULL AND status = $4
)
SELECT (SELECT generation::text FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*') AS generation,
       r.updated_at::text AS updated_at, r.id
  FROM (SELECT 1) one LEFT JOIN r ON r.rn % $3 = 1 AND r.rn > 1
 ORDER BY r.rn;

-- articles.list_counts
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total, (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation;

-- articles.list_deferred
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM (SELECT id, updated_at FROM articles WHERE project_id = $2 AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5) p
JOIN articles a ON a.id = p.id AND a.account_id = $1
ORDER BY p.updated_at DESC, p.id DESC;

-- articles.list_deferred_by_status
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM (SELECT id, updated_at FROM articles WHERE project_id = $2 AND deleted_at IS NULL AND status = $3 ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5) p
JOIN articles a ON a.id = p.id AND a.account_id = $1
ORDER BY p.updated_at DESC, p.id DESC;

-- articles.list_deferred_by_status_from_anchor
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM (SELECT id, updated_at FROM articles WHERE project_id = $2 AND deleted_at IS NULL AND status = $3 AND (updated_at, id) <= ($6::timestamptz, $7::uuid) ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5) p
JOIN articles a ON a.id = p.id AND a.account_id = $1
ORDER BY p.updated_at DESC, p.id DESC;

-- articles.list_deferred_from_anchor
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM (SELECT id, updated_at FROM articles WHERE project_id = $2 AND deleted_at IS NULL AND (updated_at, id) <= ($6::timestamptz, $7::uuid) ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5) p
JOIN articles a ON a.id = p.id AND a.account_id = $1
ORDER BY p.updated_at DESC, p.id DESC;

-- articles.list_direct
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM articles a
WHERE a.account_id = $1 AND project_id = $2 AND deleted_at IS NULL
ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5;

-- articles.list_direct_by_status
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM articles a
WHERE a.account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3
ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5;

-- articles.list_direct_by_status_from_anchor
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM articles a
WHERE a.account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND status = $3 AND (updated_at, id) <= ($6::timestamptz, $7::uuid)
ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5;

-- articles.list_direct_from_anchor
SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
       (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
       a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
FROM articles a
WHERE a.account_id = $1 AND project_id = $2 AND deleted_at IS NULL AND (updated_at, id) <= ($6::timestamptz, $7::uuid)
ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5;

-- articles.live_counts
SELECT c.account_id, c.project_id, c.n::int AS n FROM unnest($1::uuid[], $2::uuid[]) AS k(account_id, project_id)
JOIN article_counts c ON c.project_id = k.project_id AND c.status = '*' AND c.account_id = k.account_id;
