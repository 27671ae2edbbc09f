-- sessions.find
SELECT id, credential_id, protocol_version, client_name, client_version, client_capabilities, log_level, ended_at,
     extract(epoch FROM now() - last_used_at) * 1000 AS idle_ms
FROM mcp_sessions WHERE id = $1 AND account_id = $2;

-- sessions.touch
UPDATE mcp_sessions SET last_used_at = now() WHERE id = $1 AND ended_at IS NULL;
