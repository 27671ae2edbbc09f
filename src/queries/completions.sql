-- completions.article_ids
SELECT id FROM (
  (SELECT id, handle FROM articles
    WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND handle LIKE $3
    ORDER BY handle LIMIT $4)
  UNION
  (SELECT id, handle FROM articles
    WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND id::text LIKE $3
    ORDER BY id::text LIMIT $4)
) found ORDER BY handle, id LIMIT $4;

-- completions.handles
SELECT DISTINCT handle FROM articles
WHERE project_id = ANY($2::uuid[]) AND account_id = $1 AND deleted_at IS NULL AND handle LIKE $3
ORDER BY handle LIMIT $4;

-- completions.tags
SELECT DISTINCT t.tag FROM project_tags t
WHERE t.project_id = ANY($2::uuid[]) AND t.account_id = $1 AND lower(t.tag) LIKE $3 AND EXISTS (SELECT 1 FROM articles a WHERE a.project_id = t.project_id AND a.account_id = t.account_id AND a.deleted_at IS NULL AND a.tags @> ARRAY[t.tag])
ORDER BY t.tag LIMIT $4;
