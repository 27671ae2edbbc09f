import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { newId } from '../common/ids.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import type { ActivityEntry, Outcome } from './activity-entry.entity.js';

/** What the MCP layer records for one request. */
export interface ActivityRecord {
  accountId: string;
  credential: { type: string; id: string; name: string };
  client: { name: string; version: string } | null;
  sessionId: string | null;
  method: string;
  tool: string | null;
  projectId: string | null;
  outcome: Outcome;
  error: { code: number; message: string } | null;
  durationMs: number;
  at?: Date;
  count?: number;
}

export interface ActivityFilter {
  outcome?: string;
  credential_id?: string;
  method?: string;
  tool?: string;
}

const COLUMNS = ['id', 'at', 'account_id', 'credential_type', 'credential_id', 'credential_name', 'client_name', 'client_version', 'session_id', 'method', 'tool', 'project_id', 'outcome', 'error', 'duration_ms', 'count'] as const;
const MAX_BATCH = 500;

interface Pending {
  row: unknown[];
  done: () => void;
  fail: (err: unknown) => void;
}

/**
 * The account owner's activity log. Writes are group-committed: entries that arrive while a batch
 * is being written go into the next multi-row INSERT, and each caller is answered once its entry is
 * durable, so a response is never sent for a request whose entry could still be lost.
 */
@Injectable()
export class ActivityService implements OnApplicationShutdown {
  private readonly log = new Logger(ActivityService.name);
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  record(entry: ActivityRecord): Promise<void> {
    const row = [
      newId(),
      entry.at ?? new Date(),
      entry.accountId,
      entry.credential.type,
      entry.credential.id,
      entry.credential.name,
      entry.client?.name ?? null,
      entry.client?.version ?? null,
      entry.sessionId,
      entry.method,
      entry.tool,
      entry.projectId,
      entry.outcome,
      entry.error ? JSON.stringify(entry.error) : null,
      Math.max(0, Math.round(entry.durationMs)),
      entry.count ?? 1,
    ];
    return new Promise((done, fail) => {
      this.queue.push({ row, done, fail });
      if (!this.flushing) this.flushing = this.drain();
    });
  }

  /** Resolves once everything recorded so far is written. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  private async drain(): Promise<void> {
    // Let the requests of this tick join the batch.
    await new Promise((r) => setImmediate(r));
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        await this.insert(batch.map((p) => p.row));
        for (const p of batch) p.done();
      } catch (err) {
        this.log.error(`Could not write ${batch.length} activity entries: ${(err as Error).message}`);
        for (const p of batch) p.fail(err);
      }
    }
    this.flushing = null;
  }

  private async insert(rows: unknown[][]): Promise<void> {
    const params: unknown[] = [];
    const tuples = rows.map((row) => {
      const start = params.length;
      params.push(...row);
      return `(${row.map((_, i) => `$${start + i + 1}`).join(',')})`;
    });
    await this.db.query(`INSERT INTO activity_log (${COLUMNS.join(',')}) VALUES ${tuples.join(',')}`, params);
  }

  async list(accountId: string, filter: ActivityFilter, limit = 50, cursor?: string): Promise<Page<ReturnType<typeof view>>> {
    const after = decodeCursor(cursor);
    const params: unknown[] = [accountId];
    const where = ['account_id = $1'];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(`${sql} = $${params.length}`);
    };
    if (after) {
      params.push(after);
      where.push(`id < $${params.length}`);
    }
    if (filter.outcome) add('outcome', filter.outcome);
    if (filter.credential_id) add('credential_id', filter.credential_id);
    if (filter.method) add('method', filter.method);
    if (filter.tool) add('tool', filter.tool);
    params.push(limit + 1);
    const rows = (await this.db.query(`SELECT * FROM activity_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`, params)) as ActivityEntry[];
    return toPage(rows, limit, view);
  }
}

function view(e: ActivityEntry) {
  return {
    id: e.id,
    at: e.at,
    credential: { type: e.credential_type, id: e.credential_id, name: e.credential_name },
    client: e.client_name !== null ? { name: e.client_name, version: e.client_version ?? '' } : null,
    session_id: e.session_id,
    method: e.method,
    tool: e.tool,
    project_id: e.project_id,
    outcome: e.outcome,
    error: e.error,
    duration_ms: e.duration_ms,
    count: e.count,
  };
}
