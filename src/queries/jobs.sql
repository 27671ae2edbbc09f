-- jobs.claim
WITH running AS (
  SELECT account_id, count(*)::int AS n FROM jobs WHERE status = 'running' GROUP BY account_id),
accounts AS (
  SELECT q.account_id
    FROM (SELECT account_id, min(run_after) AS oldest FROM jobs
           WHERE status = 'queued' AND run_after <= now() AND tool = ANY($3)
           GROUP BY account_id) q
    LEFT JOIN running r USING (account_id)
   WHERE coalesce(r.n, 0) < $5
   ORDER BY coalesce(r.n, 0), q.oldest
   LIMIT $2),
next AS (
  SELECT j.id FROM accounts a
   CROSS JOIN LATERAL (
     SELECT id FROM jobs
      WHERE account_id = a.account_id AND status = 'queued' AND run_after <= now() AND tool = ANY($3)
      ORDER BY run_after, id
      LIMIT 1
      FOR UPDATE SKIP LOCKED) j),
claimed AS (
  UPDATE jobs j
     SET status = 'running', attempts = j.attempts + 1, locked_by = $1,
         locked_until = now() + make_interval(secs => $4), started_at = coalesce(j.started_at, now())
    FROM next
   WHERE j.id = next.id AND j.status = 'queued'
  RETURNING j.*)
SELECT * FROM claimed;

-- jobs.claim_turn
SELECT pg_advisory_xact_lock(hashtextextended('jobs_claim', 0));

-- jobs.count_queued
SELECT count(*)::int AS queued FROM jobs WHERE account_id = $1 AND status = 'queued';

-- jobs.insert
WITH j AS (
  INSERT INTO jobs (id, account_id, project_id, credential_id, tool, args, status, request_key, trace_context)
  VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'queued', $7, $8)
  RETURNING *)
SELECT j.*, pg_notify('reblog_jobs', 'n') AS notified FROM j;

-- jobs.lock_enqueue
SELECT pg_advisory_xact_lock(hashtextextended($1, 0));

-- jobs.lock_for_completion
SELECT status, locked_by, attempts FROM jobs WHERE id = $1 FOR UPDATE;

-- jobs.record_progress
WITH u AS (
  UPDATE jobs SET progress = $4::real WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3 AND progress < $4::real
  RETURNING id, progress)
SELECT pg_notify('reblog_jobs', 'p:' || u.id::text || ':' || u.progress::text) FROM u;

-- jobs.succeed
WITH u AS (
  UPDATE jobs SET status = 'succeeded', progress = 1, result = $2::jsonb, error = NULL, finished_at = now(), locked_by = NULL, locked_until = NULL
   WHERE id = $1 RETURNING id)
SELECT pg_notify('reblog_jobs', 's:' || u.id::text || ':' || 'succeeded') FROM u;
