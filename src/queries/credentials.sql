-- credentials.find_principal
WITH found AS (
  SELECT c.id, c.account_id, c.type, c.name, c.scopes, c.user_id, c.expires_at, c.secret_hash AS matched_hash, c.via
    FROM credentials c
   WHERE c.secret_hash = $1 AND c.revoked_at IS NULL
  UNION ALL
  SELECT c.id, c.account_id, c.type, c.name, c.scopes, c.user_id, t.expires_at, t.token_hash, c.via
    FROM oauth_tokens t JOIN credentials c ON c.id = t.credential_id
   WHERE t.token_hash = $1 AND t.kind = 'access' AND c.revoked_at IS NULL
)
SELECT f.id, f.account_id, f.type, f.name, f.matched_hash AS secret_hash, f.scopes, f.expires_at,
       (SELECT json_agg(json_build_object(
                 'id', p.id, 'name', p.name, 'disabled_tools', p.disabled_tools,
                 'role', CASE WHEN f.user_id IS NULL OR am.role = 'owner' THEN cp.role
                              ELSE (ARRAY['viewer', 'editor', 'owner'])[LEAST(array_position(ARRAY['viewer', 'editor', 'owner'], cp.role),
                                                                             array_position(ARRAY['viewer', 'editor', 'owner'], pm.role))] END)
               ORDER BY p.id)
          FROM credential_projects cp
          JOIN projects p ON p.id = cp.project_id AND p.account_id = f.account_id
          LEFT JOIN account_members am ON am.account_id = f.account_id AND am.user_id = f.user_id
          LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = f.user_id
         WHERE cp.credential_id = f.id AND (f.user_id IS NULL OR am.role = 'owner' OR pm.role IS NOT NULL)) AS projects
  FROM found f
  LEFT JOIN users u ON u.id = f.user_id
 WHERE (f.user_id IS NULL OR u.disabled_at IS NULL)
   AND (f.via IS DISTINCT FROM 'enterprise'
        OR EXISTS (SELECT 1 FROM account_members m WHERE m.account_id = f.account_id AND m.user_id = f.user_id));
