import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, run, sql } from '../database/sql.js';
import type { InputRequest } from '../protocol/input.js';
import type { TaskError, TaskRow } from './task.js';

/** What a task needs to run its tool call again (tasks/update): the call and the client's capabilities. */
export interface TaskCall {
  params: Record<string, unknown>;
  capabilities: Record<string, Record<string, unknown>>;
  answers: Record<string, unknown>;
}

const COLUMNS = `id, status, input_requests, result, error, created_at, last_updated_at`;

/** Every read and write names the credential: another credential's task is not found. */
const INSERT = sql<
  [id: string, accountId: string, credentialId: string, tool: string, params: string, capabilities: string, ttlMs: number, instance: string],
  TaskRow
>(
  'tasks.insert',
  `INSERT INTO mcp_tasks (id, account_id, credential_id, tool, status, params, capabilities, expires_at, instance, heartbeat_at)
        VALUES ($1, $2, $3, $4, 'working', $5::jsonb, $6::jsonb, now() + make_interval(secs => $7::double precision / 1000), $8, now())
     RETURNING ${COLUMNS}`,
);

const FIND = sql<[id: string, credentialId: string], TaskRow & TaskCall>(
  'tasks.find',
  `SELECT ${COLUMNS}, params, capabilities, answers FROM mcp_tasks WHERE id = $1 AND credential_id = $2 AND expires_at > now()`,
);

/** A working task whose instance stopped renewing its lease: failed. */
const FAIL_STALE = sql<[id: string, credentialId: string, leaseMs: number, error: string]>(
  'tasks.fail_stale',
  `UPDATE mcp_tasks SET status = 'failed', error = $4::jsonb, last_updated_at = now(), instance = NULL
    WHERE id = $1 AND credential_id = $2 AND status = 'working'
      AND heartbeat_at < now() - make_interval(secs => $3::double precision / 1000)`,
);

/** The outcome of a run, unless the task was cancelled (or failed) meanwhile. */
const SETTLE = sql<[id: string, status: string, inputRequests: string | null, result: string | null, error: string | null]>(
  'tasks.settle',
  `UPDATE mcp_tasks SET status = $2, input_requests = $3::jsonb, result = $4::jsonb, error = $5::jsonb, last_updated_at = now(), instance = NULL
    WHERE id = $1 AND status = 'working'`,
);

/** Answers recorded on a task still waiting on the same questions; `resume` sets it working on `instance`. */
const ANSWER = sql<[id: string, credentialId: string, pending: string, answers: string, remaining: string, resume: boolean, instance: string]>(
  'tasks.answer',
  `UPDATE mcp_tasks
      SET answers = $4::jsonb, last_updated_at = now(),
          input_requests = CASE WHEN $6 THEN NULL ELSE $5::jsonb END,
          status = CASE WHEN $6 THEN 'working' ELSE status END,
          instance = CASE WHEN $6 THEN $7 ELSE instance END,
          heartbeat_at = CASE WHEN $6 THEN now() ELSE heartbeat_at END
    WHERE id = $1 AND credential_id = $2 AND status = 'input_required' AND input_requests = $3::jsonb AND expires_at > now()`,
);

const CANCEL = sql<[id: string, credentialId: string]>(
  'tasks.cancel',
  `UPDATE mcp_tasks SET status = 'cancelled', input_requests = NULL, last_updated_at = now(), instance = NULL
    WHERE id = $1 AND credential_id = $2 AND status IN ('working', 'input_required')`,
);

const RENEW = sql<[ids: string[], instance: string]>(
  'tasks.renew',
  `UPDATE mcp_tasks SET heartbeat_at = now() WHERE id = ANY($1) AND instance = $2 AND status = 'working'`,
);

/** This instance's working tasks, when it stops: failed. */
const FAIL_INSTANCE = sql<[ids: string[], instance: string, error: string]>(
  'tasks.fail_instance',
  `UPDATE mcp_tasks SET status = 'failed', error = $3::jsonb, last_updated_at = now(), instance = NULL
    WHERE id = ANY($1) AND instance = $2 AND status = 'working'`,
);

const PURGE = sql<[batch: number]>(
  'tasks.purge',
  `DELETE FROM mcp_tasks WHERE id IN (SELECT id FROM mcp_tasks WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

@Injectable()
export class TasksRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(task: {
    id: string;
    accountId: string;
    credentialId: string;
    tool: string;
    params: object;
    capabilities: object;
    ttlMs: number;
    instance: string;
  }): Promise<TaskRow> {
    return (await row(this.db, INSERT, [
      task.id,
      task.accountId,
      task.credentialId,
      task.tool,
      JSON.stringify(task.params),
      JSON.stringify(task.capabilities),
      task.ttlMs,
      task.instance,
    ]))!;
  }

  find(id: string, credentialId: string): Promise<(TaskRow & TaskCall) | null> {
    return row(this.db, FIND, [id, credentialId]);
  }

  async failStale(id: string, credentialId: string, leaseMs: number, error: TaskError): Promise<void> {
    await run(this.db, FAIL_STALE, [id, credentialId, leaseMs, JSON.stringify(error)]);
  }

  async settle(id: string, outcome: { status: string; inputRequests?: Record<string, InputRequest>; result?: object; error?: TaskError }): Promise<void> {
    await run(this.db, SETTLE, [id, outcome.status, json(outcome.inputRequests), json(outcome.result), json(outcome.error)]);
  }

  /** Whether the answers were recorded (false: the task no longer waits on `pending`). */
  async answer(id: string, credentialId: string, pending: object, answers: object, remaining: object, resume: boolean, instance: string): Promise<boolean> {
    return (
      (await affected(this.db, ANSWER, [id, credentialId, JSON.stringify(pending), JSON.stringify(answers), JSON.stringify(remaining), resume, instance])) > 0
    );
  }

  /** Whether it was cancelled now (false: unknown, or already terminal). */
  async cancel(id: string, credentialId: string): Promise<boolean> {
    return (await affected(this.db, CANCEL, [id, credentialId])) > 0;
  }

  async renew(ids: string[], instance: string): Promise<void> {
    await run(this.db, RENEW, [ids, instance]);
  }

  async failInstance(ids: string[], instance: string, error: TaskError): Promise<void> {
    await run(this.db, FAIL_INSTANCE, [ids, instance, JSON.stringify(error)]);
  }

  async purge(batch = 100): Promise<number> {
    return affected(this.db, PURGE, [batch]);
  }
}
