import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { openAsyncCommitPool } from '../database/async-commit-pool.js';
import { run, sql } from '../database/sql.js';
import type { Outcome } from './activity-entry.entity.js';

/** A new entry, column by column. */
export interface ActivityInsert {
  id: string;
  at: Date;
  account_id: string;
  credential_type: string;
  credential_id: string;
  credential_name: string;
  client_name: string | null;
  client_version: string | null;
  session_id: string | null;
  method: string;
  tool: string | null;
  project_id: string | null;
  outcome: Outcome;
  /** JSON text. */
  error: string | null;
  duration_ms: number;
  count: number;
  fold_key: string | null;
  request_id: string | null;
}

const COLUMNS = [
  'id',
  'at',
  'account_id',
  'credential_type',
  'credential_id',
  'credential_name',
  'client_name',
  'client_version',
  'session_id',
  'method',
  'tool',
  'project_id',
  'outcome',
  'error',
  'duration_ms',
  'count',
  'fold_key',
  'request_id',
] as const satisfies readonly (keyof ActivityInsert)[];
const TYPES = [
  'uuid',
  'timestamptz',
  'uuid',
  'text',
  'uuid',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'uuid',
  'text',
  'jsonb',
  'int4',
  'int4',
  'text',
  'text',
];

const INSERT_ROWS = `INSERT INTO activity_log (${COLUMNS.join(', ')}) SELECT * FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;

/**
 * One statement for any batch without a folded entry (every batch but a flood's): one array per column
 * (the SQL text never changes, and it stays cheap for large batches). Prepared: parsed and planned
 * once per connection.
 */
const INSERT = sql<string[]>('activity.insert', INSERT_ROWS, { hot: true, prepared: true });

/**
 * The same for a batch holding a folded entry, which adds its count to the row already holding its
 * fold key. Only then: with ON CONFLICT, PostgreSQL inserts every row of the statement speculatively,
 * also the rows the fold key's index does not hold (a lock taken and released and one more WAL record
 * per row), 1–2 µs of its CPU and ~45 bytes of WAL per entry (bench/README.md#activity-log-and-rate-limit--npm-run-benchactivity).
 */
const INSERT_FOLDING = sql<string[]>(
  'activity.insert_folding',
  `${INSERT_ROWS} ON CONFLICT (fold_key) WHERE fold_key IS NOT NULL DO UPDATE SET count = activity_log.count + EXCLUDED.count`,
  { hot: true, prepared: true },
);

/**
 * Connections of the writer's pool: as many batches may be written at the same time. With list_articles
 * at 50 connections, 6 rather than 3 cut the wait for the commit from about 13 to 8 ms (10 did no
 * better: about 12 entries per commit either way); see docs/scaling.md#the-activity-log.
 */
export const WRITER_CONNECTIONS = 6;

/**
 * The writes to `activity_log`. They go through the writer's own connections, which commit
 * asynchronously (`synchronous_commit = off`; see ActivityWriterService for why that is safe enough).
 * The reads are ActivityReportsRepository's.
 */
@Injectable()
export class ActivityWriterRepository {
  private readonly log = new Logger(ActivityWriterRepository.name);
  private readonly writer: pg.Pool;

  constructor(@InjectDataSource() db: DataSource) {
    this.writer = openAsyncCommitPool(db, 'activity', WRITER_CONNECTIONS, this.log);
  }

  /** Inserts the entries in one statement; an entry with the fold key of a stored one adds its count to it instead. */
  async insert(entries: readonly ActivityInsert[]): Promise<void> {
    const statement = entries.some((entry) => entry.fold_key !== null) ? INSERT_FOLDING : INSERT;
    await run(
      this.writer,
      statement,
      COLUMNS.map((column) => arrayLiteral(entries, column)),
    );
  }

  /** Closes the writer's connections; called once the last entries are written. */
  async close(): Promise<void> {
    await this.writer.end().catch(() => undefined);
  }
}

const QUOTED = /["\\]/;
const QUOTED_ALL = /["\\]/g;

/**
 * One column of the entries as a PostgreSQL array literal, as pg would send the array: every value
 * quoted (a backslash or double quote escaped by a backslash), a date in ISO 8601, null as NULL. Built
 * here because pg's serialiser runs two replacements on every value of every column, and nearly no
 * value has anything to escape (bench/README.md#protocol-overhead--npm-run-bench).
 */
function arrayLiteral(entries: readonly ActivityInsert[], column: keyof ActivityInsert): string {
  let literal = '{';
  for (let i = 0; i < entries.length; i++) {
    const value = entries[i][column];
    if (i > 0) literal += ',';
    if (value === null) literal += 'NULL';
    else if (typeof value === 'number') literal += String(value);
    else {
      const text = typeof value === 'string' ? value : value.toISOString();
      literal += '"' + (QUOTED.test(text) ? text.replace(QUOTED_ALL, '\\$&') : text) + '"';
    }
  }
  return literal + '}';
}
