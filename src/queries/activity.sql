-- activity.chart
SELECT b.start AS bucket, e.outcome, e.requests
FROM generate_series(date_bin($5::interval, $2::timestamptz, timestamptz '2000-01-01 00:00:00+00'), $3::timestamptz, $5::interval) AS b(start)
CROSS JOIN LATERAL (
  SELECT outcome, sum(count)::int AS requests
  FROM activity_log
  WHERE account_id = $1 AND at >= greatest(b.start, $2::timestamptz) AND at < least(b.start + $5::interval, $3::timestamptz)
    AND ($4::uuid[] IS NULL OR credential_id = ANY($4::uuid[]))
  GROUP BY outcome
) AS e
ORDER BY 1, 2;

-- activity.insert
INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, client_name, client_version, session_id, method, tool, project_id, outcome, error, duration_ms, count, fold_key, request_id) SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::uuid[], $13::text[], $14::jsonb[], $15::int4[], $16::int4[], $17::text[], $18::text[]);

-- activity.insert_folding
INSERT INTO activity_log (id, at, account_id, credential_type, credential_id, credential_name, client_name, client_version, session_id, method, tool, project_id, outcome, error, duration_ms, count, fold_key, request_id) SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::uuid[], $13::text[], $14::jsonb[], $15::int4[], $16::int4[], $17::text[], $18::text[]) ON CONFLICT (fold_key) WHERE fold_key IS NOT NULL DO UPDATE SET count = activity_log.count + EXCLUDED.count;

-- activity.list
SELECT * FROM activity_log WHERE account_id = $1 ORDER BY id DESC LIMIT $2;

-- activity.list_after
SELECT * FROM activity_log WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3;

-- activity.list_credentials
SELECT e.* FROM unnest($2::uuid[]) AS c(id) CROSS JOIN LATERAL (SELECT * FROM activity_log WHERE account_id = $1 AND credential_id = c.id ORDER BY id DESC LIMIT $3) AS e ORDER BY e.id DESC LIMIT $3;

-- activity.list_credentials_after
SELECT e.* FROM unnest($2::uuid[]) AS c(id) CROSS JOIN LATERAL (SELECT * FROM activity_log WHERE account_id = $1 AND credential_id = c.id AND id < $3 ORDER BY id DESC LIMIT $4) AS e ORDER BY e.id DESC LIMIT $4;
