import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { openAsyncCommitPool } from '../database/async-commit-pool.js';
import { rows, row, run, sql, transaction, type Queryable, type Sql } from '../database/sql.js';
import { JOB_CHANNEL } from './job-events.service.js';
import type { Job, JobStatus } from './job.entity.js';

// SQL expressions building the payloads of JOB_CHANNEL (parseJobEvent reads them), sent when the statement's transaction commits.
const notifyNew = `pg_notify('${JOB_CHANNEL}', 'n')`;
const notifyStatus = (id: string, status: string) => `pg_notify('${JOB_CHANNEL}', 's:' || ${id} || ':' || ${status})`;
const notifyProgress = (id: string, progress: string) => `pg_notify('${JOB_CHANNEL}', 'p:' || ${id} || ':' || ${progress})`;

/** What the statements that notify answer beside the job: the NOTIFY's (void) value, dropped. */
type Notified<R> = R & { notified?: unknown };

const LOCK_ENQUEUE = sql<[key: string]>('jobs.lock_enqueue', `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, { hot: true });

const COUNT_QUEUED = sql<[accountId: string], { queued: number }>(
  'jobs.count_queued',
  `SELECT count(*)::int AS queued FROM jobs WHERE account_id = $1 AND status = 'queued'`,
  { hot: true },
);

const INSERT = sql<
  [
    id: string,
    accountId: string,
    projectId: string,
    credentialId: string | null,
    tool: string,
    args: string,
    requestKey: string | null,
    traceContext: string | null,
  ],
  Notified<Job>
>(
  'jobs.insert',
  `WITH j AS (
           INSERT INTO jobs (id, account_id, project_id, credential_id, tool, args, status, request_key, trace_context)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'queued', $7, $8)
           RETURNING *)
         SELECT j.*, ${notifyNew} AS notified FROM j`,
  { hot: true },
);

/**
 * Cancels the jobs matching `where`, telling every instance (their workers stop them). Every `where`
 * keeps `status IN ('queued', 'running')`: that condition, in the same statement, is what makes a
 * cancellation of a finished job change nothing. A job's article or image commits with its `succeeded`
 * under the row lock of the completion; an UPDATE arriving meanwhile waits for it and then finds the
 * row no longer matching, so a cancellation at the instant the job finishes destroys nothing.
 */
function cancelWhere<P extends readonly unknown[]>(name: string, where: string): Sql<P, Notified<Job>> {
  return sql<P, Notified<Job>>(
    name,
    `WITH u AS (
         UPDATE jobs SET status = 'cancelled', cancel_requested = true, finished_at = now(), locked_by = NULL, locked_until = NULL
          WHERE ${where}
         RETURNING *)
       SELECT u.*, ${notifyStatus('u.id::text', `'cancelled'`)} AS notified FROM u`,
  );
}

const CANCEL = cancelWhere<[id: string, accountId: string, projectIds: readonly string[]]>(
  'jobs.cancel',
  `id = $1 AND account_id = $2 AND project_id = ANY($3::uuid[]) AND status IN ('queued', 'running')`,
);

const CANCEL_BY_REQUEST = cancelWhere<[accountId: string, credentialId: string, requestKey: string]>(
  'jobs.cancel_by_request',
  `account_id = $1 AND credential_id = $2 AND request_key = $3 AND status IN ('queued', 'running')`,
);

const CANCEL_IF_REQUEST_CANCELLED = cancelWhere<[id: string, credentialId: string | null, requestKey: string]>(
  'jobs.cancel_if_request_cancelled',
  `id = $1 AND status IN ('queued', 'running') AND EXISTS (SELECT 1 FROM request_cancellations WHERE credential_id = $2 AND request_key = $3)`,
);

/** `request_cancellations` exists for these jobs only: a cancelled request's key, kept an hour for the job it may still create. */
const REMEMBER_CANCELLED_REQUEST = sql<[credentialId: string, requestKey: string]>(
  'jobs.remember_cancelled_request',
  `WITH expired AS (DELETE FROM request_cancellations WHERE at < now() - interval '1 hour')
       INSERT INTO request_cancellations (credential_id, request_key) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
);

const FIND = sql<[id: string, accountId: string, projectIds: readonly string[]], Job>(
  'jobs.find',
  `SELECT * FROM jobs WHERE id = $1 AND account_id = $2 AND project_id = ANY($3::uuid[])`,
);

// The console's overview: jobs waiting and running in some projects of an account (partial indexes of the claim).
const COUNT_ACTIVE = sql<[accountId: string, projectIds: readonly string[]], { queued: number; running: number }>(
  'jobs.count_active',
  `SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'running')::int AS running
     FROM jobs WHERE account_id = $1 AND status IN ('queued', 'running') AND project_id = ANY($2::uuid[])`,
);

const REREAD = sql<[id: string, accountId: string], Job>('jobs.reread', `SELECT * FROM jobs WHERE id = $1 AND account_id = $2`);

const IN_PROJECT = 'account_id = $1 AND project_id = $2';
const COUNT_IN_PROJECT = sql<[accountId: string, projectId: string], { total: number }>(
  'jobs.count_in_project',
  `SELECT count(*)::int AS total FROM jobs WHERE ${IN_PROJECT}`,
);
const COUNT_IN_PROJECT_BY_STATUS = sql<[accountId: string, projectId: string, status: JobStatus], { total: number }>(
  'jobs.count_in_project_by_status',
  `SELECT count(*)::int AS total FROM jobs WHERE ${IN_PROJECT} AND status = $3`,
);
const PAGE_IN_PROJECT = sql<[accountId: string, projectId: string, limit: number, offset: number], Job>(
  'jobs.page_in_project',
  `SELECT * FROM jobs WHERE ${IN_PROJECT} ORDER BY id DESC LIMIT $3 OFFSET $4`,
);
const PAGE_IN_PROJECT_BY_STATUS = sql<[accountId: string, projectId: string, status: JobStatus, limit: number, offset: number], Job>(
  'jobs.page_in_project_by_status',
  `SELECT * FROM jobs WHERE ${IN_PROJECT} AND status = $3 ORDER BY id DESC LIMIT $4 OFFSET $5`,
);

/** The admin listing's optional conditions, in the order their parameters follow the account's. */
const LIST_CONDITIONS = [
  ['after', 'id < ?'],
  ['status', 'status = ?'],
  ['project', 'project_id = ?'],
  ['projects', 'project_id = ANY(?)'],
] as const;
type ListCondition = (typeof LIST_CONDITIONS)[number][0];

/** Every variant of the admin listing, one statement per set of conditions, keyed by their names joined with `_`. */
const LISTS = new Map<string, Sql<unknown[], Job>>();
for (let mask = 0; mask < 1 << LIST_CONDITIONS.length; mask++) {
  const used = LIST_CONDITIONS.filter((_, i) => mask & (1 << i));
  const where = ['account_id = $1', ...used.map(([, condition], i) => condition.replace('?', `$${i + 2}`))];
  const key = used.map(([name]) => name).join('_');
  LISTS.set(key, sql(`jobs.list${key ? `_${key}` : ''}`, `SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${used.length + 2}`));
}

// The worker's statements.

const HAND_BACK = sql<[workerId: string]>(
  'jobs.hand_back',
  `WITH r AS (
           UPDATE jobs SET status = 'queued', locked_by = NULL, locked_until = NULL, run_after = now(), attempts = greatest(attempts - 1, 0)
            WHERE status = 'running' AND locked_by = $1
           RETURNING id)
         SELECT ${notifyNew} FROM r LIMIT 1`,
);

const CLAIM_TURN = sql('jobs.claim_turn', `SELECT pg_advisory_xact_lock(hashtextextended('jobs_claim', 0))`, { hot: true });

// UPDATEs sit in a CTE so the driver answers rows (a bare UPDATE answers [rows, count]).
const CLAIM = sql<[workerId: string, limit: number, kinds: readonly string[], leaseSeconds: number, maxRunningPerAccount: number], Job>(
  'jobs.claim',
  `WITH running AS (
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
         SELECT * FROM claimed`,
  { hot: true },
);

const LOCK_FOR_COMPLETION = sql<[id: string], Pick<Job, 'status' | 'locked_by' | 'attempts'>>(
  'jobs.lock_for_completion',
  `SELECT status, locked_by, attempts FROM jobs WHERE id = $1 FOR UPDATE`,
  { hot: true },
);

const SUCCEED = sql<[id: string, result: string]>(
  'jobs.succeed',
  `WITH u AS (
           UPDATE jobs SET status = 'succeeded', progress = 1, result = $2::jsonb, error = NULL, finished_at = now(), locked_by = NULL, locked_until = NULL
            WHERE id = $1 RETURNING id)
         SELECT ${notifyStatus('u.id::text', `'succeeded'`)} FROM u`,
  { hot: true },
);

const FAIL = sql<[id: string, workerId: string, attempt: number, error: string]>(
  'jobs.fail',
  `WITH u AS (
           UPDATE jobs SET status = 'failed', error = $4::jsonb, finished_at = now(), locked_by = NULL, locked_until = NULL
            WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3
           RETURNING id)
         SELECT ${notifyStatus('u.id::text', `'failed'`)} FROM u`,
);

const RETRY_LATER = sql<[id: string, workerId: string, attempt: number, backoffSeconds: number]>(
  'jobs.retry_later',
  `UPDATE jobs SET status = 'queued', locked_by = NULL, locked_until = NULL, run_after = now() + make_interval(secs => $4)
          WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3`,
);

const RECORD_PROGRESS = sql<[id: string, workerId: string, attempt: number, progress: number]>(
  'jobs.record_progress',
  `WITH u AS (
               UPDATE jobs SET progress = $4::real WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3 AND progress < $4::real
               RETURNING id, progress)
             SELECT ${notifyProgress('u.id::text', 'u.progress::text')} FROM u`,
  { hot: true },
);

const RENEW_LEASES = sql<[workerId: string, ids: readonly string[], leaseSeconds: number], { id: string; attempts: number }>(
  'jobs.renew_leases',
  `WITH u AS (
           UPDATE jobs SET locked_until = now() + make_interval(secs => $3)
            WHERE id = ANY($2::uuid[]) AND locked_by = $1 AND status = 'running' AND NOT cancel_requested
           RETURNING id, attempts)
         SELECT * FROM u`,
);

const RECLAIM_EXPIRED = sql(
  'jobs.reclaim_expired',
  `WITH expired AS (
           SELECT id FROM jobs WHERE status = 'running' AND locked_until < now() FOR UPDATE SKIP LOCKED),
         u AS (
           UPDATE jobs j SET
             status = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'queued' END,
             error = CASE WHEN j.attempts >= j.max_attempts
               THEN jsonb_build_object('code', 'unavailable', 'message',
                 'The worker running this job stopped ' || j.attempts || ' times; call ' || j.tool || ' again, and if it keeps failing tell the user the service has a problem.')
               ELSE j.error END,
             finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
             run_after = now() + make_interval(secs => least(60, power(2, greatest(j.attempts - 1, 0)))),
             locked_by = NULL, locked_until = NULL
           FROM expired WHERE j.id = expired.id AND j.status = 'running'
           RETURNING j.id, j.status)
         SELECT id, status, ${notifyStatus('u.id::text', 'u.status')} FROM u`,
);

/**
 * Connections of the worker's bookkeeping pool (claims, heartbeats, progress). It commits
 * asynchronously (no fsync wait): losing one of those writes in a database crash only sends the job
 * back to the queue or its lease to expiry, and the run's final write, fenced by the claim, then
 * does nothing. Side effects and terminal states go through the main pool, durably.
 */
const BOOKKEEPING_CONNECTIONS = 2;

/** A new job's columns. */
export interface JobInsert {
  id: string;
  accountId: string;
  projectId: string;
  credentialId: string | null;
  tool: string;
  args: Record<string, unknown>;
  requestKey: string | null;
  /** The W3C `traceparent` of the traced call that queues it; null when tracing is off. */
  traceContext: string | null;
}

/** The admin listing's conditions; each one given narrows it. */
export interface JobListConditions {
  after?: string | null;
  status?: string;
  projectId?: string;
  projectIds?: readonly string[];
}

/** The `jobs` table (and `request_cancellations`, which only serves it): every statement of the queue and its worker. */
@Injectable()
export class JobsRepository implements OnApplicationShutdown {
  private readonly log = new Logger(JobsRepository.name);
  /** Opened by the worker's first bookkeeping statement: a process that runs no jobs never opens it. */
  private bookkeeping: pg.Pool | null = null;
  private closed = false;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** After every module's destroy hook: the worker has handed its jobs back and its runs have stopped. */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.bookkeeping?.end().catch(() => undefined);
  }

  private get book(): pg.Pool {
    if (this.closed) throw new Error('The worker is stopped.');
    this.bookkeeping ??= openAsyncCommitPool(this.db, 'worker', BOOKKEEPING_CONNECTIONS, this.log);
    return this.bookkeeping;
  }

  /** Serialises the enqueues of one account, on every instance, until the caller's transaction ends. */
  async lockEnqueue(accountId: string, db: Queryable = this.db): Promise<void> {
    await run(db, LOCK_ENQUEUE, [`jobs_enqueue:${accountId}`]);
  }

  async countQueued(accountId: string, db: Queryable = this.db): Promise<number> {
    return (await row(db, COUNT_QUEUED, [accountId]))!.queued;
  }

  /** Inserts a queued job and wakes the workers (the notification is sent when the insert commits). */
  async insert(job: JobInsert, db: Queryable = this.db): Promise<Job> {
    const [inserted] = await rows(db, INSERT, [
      job.id,
      job.accountId,
      job.projectId,
      job.credentialId,
      job.tool,
      JSON.stringify(job.args),
      job.requestKey,
      job.traceContext,
    ]);
    return withoutNotified(inserted)!;
  }

  find(accountId: string, projectIds: readonly string[], id: string): Promise<Job | null> {
    return row(this.db, FIND, [id, accountId, projectIds]);
  }

  /** Jobs queued and running in these projects of the account. */
  async countActive(accountId: string, projectIds: readonly string[]): Promise<{ queued: number; running: number }> {
    return (await row(this.db, COUNT_ACTIVE, [accountId, projectIds]))!;
  }

  reread(id: string, accountId: string): Promise<Job | null> {
    return row(this.db, REREAD, [id, accountId]);
  }

  /** One page of a project's jobs, newest first, and how many there are. */
  async pageInProject(
    accountId: string,
    projectId: string,
    status: JobStatus | undefined,
    limit: number,
    offset: number,
  ): Promise<{ total: number; jobs: Job[] }> {
    const [count, jobs] = status
      ? [
          await row(this.db, COUNT_IN_PROJECT_BY_STATUS, [accountId, projectId, status]),
          await rows(this.db, PAGE_IN_PROJECT_BY_STATUS, [accountId, projectId, status, limit, offset]),
        ]
      : [await row(this.db, COUNT_IN_PROJECT, [accountId, projectId]), await rows(this.db, PAGE_IN_PROJECT, [accountId, projectId, limit, offset])];
    return { total: count!.total, jobs };
  }

  /** An account's jobs, newest first, up to `limit`, narrowed by the conditions given. */
  list(accountId: string, conditions: JobListConditions, limit: number): Promise<Job[]> {
    const values: Record<ListCondition, unknown> = {
      after: conditions.after,
      status: conditions.status,
      project: conditions.projectId,
      projects: conditions.projectIds,
    };
    const used = LIST_CONDITIONS.filter(([name]) => values[name]);
    return rows(this.db, LISTS.get(used.map(([name]) => name).join('_'))!, [accountId, ...used.map(([name]) => values[name]), limit]);
  }

  /** Cancels the job if it is the account's, in one of `projectIds`, and not finished. */
  async cancel(accountId: string, projectIds: readonly string[], id: string): Promise<Job | null> {
    return withoutNotified((await rows(this.db, CANCEL, [id, accountId, projectIds]))[0]);
  }

  /** Cancels the unfinished job a request of this credential started, if any. */
  async cancelByRequest(accountId: string, credentialId: string, requestKey: string): Promise<Job | null> {
    return withoutNotified((await rows(this.db, CANCEL_BY_REQUEST, [accountId, credentialId, requestKey]))[0]);
  }

  /** Cancels the new job if the request that created it was cancelled already. */
  async cancelIfRequestCancelled(id: string, credentialId: string | null, requestKey: string): Promise<Job | null> {
    return withoutNotified((await rows(this.db, CANCEL_IF_REQUEST_CANCELLED, [id, credentialId, requestKey]))[0]);
  }

  /** Keeps a cancelled request's key (an hour), dropping the expired ones. */
  async rememberCancelledRequest(credentialId: string, requestKey: string): Promise<void> {
    await run(this.db, REMEMBER_CANCELLED_REQUEST, [credentialId, requestKey]);
  }

  // The worker's.

  /** Puts the worker's running jobs back in the queue without using up an attempt. */
  async handBack(workerId: string): Promise<void> {
    await run(this.db, HAND_BACK, [workerId]);
  }

  /**
   * Claims up to `limit` due jobs of these kinds for the worker (see JobWorkerService.claim for the
   * rule), taking turns with every other worker on one advisory lock; on the bookkeeping pool.
   */
  async claim(workerId: string, limit: number, kinds: readonly string[], leaseSeconds: number, maxRunningPerAccount: number): Promise<Job[]> {
    return transaction(this.book, async (client) => {
      await run(client, CLAIM_TURN, []);
      return rows(client, CLAIM, [workerId, limit, kinds, leaseSeconds, maxRunningPerAccount]);
    });
  }

  /** Locks the job until the caller's transaction ends and answers who holds it. */
  lockForCompletion(id: string, db: Queryable): Promise<Pick<Job, 'status' | 'locked_by' | 'attempts'> | null> {
    return row(db, LOCK_FOR_COMPLETION, [id]);
  }

  async succeed(id: string, result: Record<string, unknown>, db: Queryable): Promise<void> {
    await run(db, SUCCEED, [id, JSON.stringify(result)]);
  }

  /** Fails the job, if this run of this worker still holds it. */
  async fail(id: string, workerId: string, attempt: number, error: { code: string; message: string }): Promise<void> {
    await run(this.db, FAIL, [id, workerId, attempt, JSON.stringify(error)]);
  }

  /** Queues the job again after `backoffSeconds`, if this run of this worker still holds it. */
  async retryLater(id: string, workerId: string, attempt: number, backoffSeconds: number): Promise<void> {
    await run(this.db, RETRY_LATER, [id, workerId, attempt, backoffSeconds]);
  }

  /** Raises the job's progress, if this run still holds it; on the bookkeeping pool. */
  async recordProgress(id: string, workerId: string, attempt: number, progress: number): Promise<void> {
    await run(this.book, RECORD_PROGRESS, [id, workerId, attempt, progress]);
  }

  /** Renews the leases of the jobs the worker still holds, and answers them with their attempt; on the bookkeeping pool. */
  async renewLeases(workerId: string, ids: readonly string[], leaseSeconds: number): Promise<{ id: string; attempts: number }[]> {
    return rows(this.book, RENEW_LEASES, [workerId, ids, leaseSeconds]);
  }

  /** Takes back the jobs whose lease expired: queued again with backoff, or failed after the last attempt. */
  async reclaimExpired(): Promise<void> {
    await run(this.db, RECLAIM_EXPIRED, []);
  }
}

function withoutNotified(job: Notified<Job> | undefined): Job | null {
  if (!job) return null;
  delete job.notified;
  return job;
}
