-- credentials.find_principal
SELECT c.id, c.account_id, c.type, c.name, c.secret_hash, c.scopes, c.expires_at,
      (SELECT json_agg(json_build_object('id', p.id, 'name', p.name, 'role', cp.role, 'disabled_tools', p.disabled_tools) ORDER BY p.id)
         FROM credential_projects cp JOIN projects p ON p.id = cp.project_id AND p.account_id = c.account_id
        WHERE cp.credential_id = c.id) AS projects
 FROM credentials c
WHERE c.secret_hash = $1 AND c.revoked_at IS NULL;
