import { Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { Outcome } from './activity-entry.entity.js';
import { ActivityWriterRepository, WRITER_CONNECTIONS, type ActivityInsert } from './activity-writer.repository.js';

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
  /** The request's id (X-Request-Id); null when it has none. */
  requestId: string | null;
}

/** Outcomes whose bursts are folded into one entry per credential per second (docs/admin-api.md#activity-log). */
const FOLDED: ReadonlySet<Outcome> = new Set(['rate_limited']);
const MAX_BATCH = 1_000;
/**
 * Batches written at the same time, one per writer connection. Entries that arrive while a commit is
 * in progress start a batch of their own on a free connection rather than wait for it: one batch at
 * a time would be fewer statements per entry, but every entry would then wait for the commit in
 * progress and then its own, while the server sat idle (docs/scaling.md#the-activity-log).
 */
const MAX_PARALLEL = WRITER_CONNECTIONS;
/** Entries kept in memory while the database is unreachable, written when it is back. */
const MAX_HELD = 100_000;
const RETRY_MS = 1_000;

interface Pending {
  row: ActivityInsert;
  queuedAt: number;
  done: () => void;
  fail: (err: unknown) => void;
}

/**
 * The account owner's activity log: its writer (the reading is ActivityReportsService's).
 *
 * Writes are group-committed: entries that arrive while a batch is being written go into the next
 * multi-row INSERT, and each caller is answered once its entry is committed, so a response is never
 * sent for a request whose entry this process still holds: killing it (even with SIGKILL) loses no
 * answered request's entry. The commits are asynchronous (`synchronous_commit = off`, on the writer's
 * own connections only, in ActivityWriterRepository): the entry is in PostgreSQL when the answer leaves, and PostgreSQL flushes it
 * to disk within about 0.6 s. Only a crash of PostgreSQL itself, or of its host, inside that window can
 * lose entries. Waiting for the flush too cost a fifth of the server's throughput (bench/activity).
 *
 * Refusals by the rate limit are folded into one row per credential per second (a unique fold key,
 * the count added on conflict), so a flood of them adds one row a second however many requests it
 * holds; the counts add up to the requests made.
 *
 * While the database cannot be reached, entries are held in memory (up to {@link MAX_HELD}) and
 * written as soon as it answers again; the callers are not held up for it. An entry the database
 * refuses (bad data) is written alone, so it never takes its batch down with it.
 */
@Injectable()
export class ActivityWriterService implements OnApplicationShutdown {
  private readonly log = new Logger(ActivityWriterService.name);
  private queue: Pending[] = [];
  private held: ActivityInsert[] = [];
  private readonly batches = new Set<Promise<void>>();
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly entries: ActivityWriterRepository,
    private readonly clock: Clock,
    @Optional() private readonly metrics?: MetricsService,
  ) {}

  record(entry: ActivityRecord): Promise<void> {
    const at = this.clock.now();
    const row: ActivityInsert = {
      id: newId(),
      at,
      account_id: entry.accountId,
      credential_type: entry.credential.type,
      credential_id: entry.credential.id,
      credential_name: text(entry.credential.name, 200),
      client_name: entry.client ? text(entry.client.name, 200) : null,
      client_version: entry.client ? text(entry.client.version, 100) : null,
      session_id: entry.sessionId === null ? null : text(entry.sessionId, 200),
      method: text(entry.method, 100),
      tool: entry.tool === null ? null : text(entry.tool, 100),
      project_id: entry.projectId,
      outcome: entry.outcome,
      error: entry.error ? JSON.stringify({ code: entry.error.code, message: text(entry.error.message, 1_000) }) : null,
      duration_ms: Math.min(2_147_483_647, Math.max(0, Math.round(entry.durationMs))),
      count: 1,
      fold_key: FOLDED.has(entry.outcome) ? `${entry.outcome}:${entry.credential.id}:${Math.floor(at.getTime() / 1000)}` : null,
      // A folded entry stands for many requests: it names none of them.
      request_id: entry.requestId === null || FOLDED.has(entry.outcome) ? null : text(entry.requestId, 200),
    };
    return new Promise((done, fail) => {
      this.queue.push({ row, queuedAt: performance.now(), done, fail });
      this.schedule();
    });
  }

  /** Resolves once everything recorded so far is written (or held because the database is away). */
  async flush(): Promise<void> {
    while (this.queue.length || this.batches.size) {
      if (this.batches.size) await Promise.race(this.batches);
      else await new Promise((r) => setImmediate(r));
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.held.length) await this.writeHeld();
    if (this.held.length) this.log.error(`${this.held.length} activity entries could not be written before shutdown: the database did not answer.`);
    await this.entries.close();
  }

  /** Starts a batch on the next turn of the event loop (so the requests of this tick join it), if a writer connection is free. */
  private schedule(): void {
    if (this.scheduled || this.batches.size >= MAX_PARALLEL) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.queue.length && this.batches.size < MAX_PARALLEL) {
        const batch = this.queue.splice(0, MAX_BATCH);
        const writing: Promise<void> = this.writeBatch(batch).finally(() => {
          this.batches.delete(writing);
          if (this.queue.length) this.schedule();
        });
        this.batches.add(writing);
      }
    });
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    try {
      await this.write(batch.map((p) => p.row));
      const now = performance.now();
      for (const p of batch) {
        this.metrics?.activityLag.observe((now - p.queuedAt) / 1000);
        p.done();
      }
    } catch (err) {
      if (unreachable(err)) {
        this.hold(
          batch.map((p) => p.row),
          err as Error,
        );
        for (const p of batch) p.done();
      } else {
        await this.writeOneByOne(batch);
      }
    }
  }

  /** A batch the database refused: each entry alone, so one bad entry loses nothing but itself. */
  private async writeOneByOne(batch: Pending[]): Promise<void> {
    for (const p of batch) {
      try {
        await this.write([p.row]);
        p.done();
      } catch (err) {
        if (unreachable(err)) {
          this.hold([p.row], err as Error);
          p.done();
          continue;
        }
        this.metrics?.activityFailures.inc();
        this.log.error(`Activity entry refused by the database: ${(err as Error).message}`);
        p.fail(err);
      }
    }
  }

  private hold(rows: ActivityInsert[], err: Error): void {
    if (!this.held.length) this.log.warn(`Activity log unreachable (${err.message}): holding entries in memory until the database answers.`);
    this.held.push(...rows);
    if (this.held.length > MAX_HELD) {
      const lost = this.held.splice(0, this.held.length - MAX_HELD);
      this.metrics?.activityFailures.inc(lost.length);
      this.log.error(`${lost.length} activity entries dropped: more than ${MAX_HELD} waited for the database.`);
    }
    this.retryTimer ??= setTimeout(() => void this.retryHeld(), RETRY_MS);
  }

  private async retryHeld(): Promise<void> {
    this.retryTimer = null;
    await this.writeHeld();
    if (this.held.length) this.retryTimer = setTimeout(() => void this.retryHeld(), RETRY_MS);
    else this.log.log('Activity log reachable again: held entries written.');
  }

  private async writeHeld(): Promise<void> {
    while (this.held.length) {
      const rows = this.held.slice(0, MAX_BATCH);
      try {
        await this.write(rows);
      } catch (err) {
        if (unreachable(err)) return;
        // Bad data among held rows: write them one by one, dropping what the database refuses.
        for (const row of rows) {
          await this.write([row]).catch((e: Error) => {
            if (unreachable(e)) throw e;
            this.metrics?.activityFailures.inc();
            this.log.error(`Held activity entry refused by the database: ${e.message}`);
          });
        }
      }
      this.held.splice(0, rows.length);
    }
  }

  /** One INSERT of `rows`; folded entries of the same key are summed first (one statement may not touch a row twice). */
  private async write(rows: ActivityInsert[]): Promise<void> {
    const folded = new Map<string, ActivityInsert>();
    const plain: ActivityInsert[] = [];
    for (const row of rows) {
      const key = row.fold_key;
      if (key === null) {
        plain.push(row);
        continue;
      }
      const first = folded.get(key);
      if (first) first.count += row.count;
      else folded.set(key, { ...row });
    }
    // Fold rows in key order: two instances updating the same rows never wait on each other in a cycle.
    await this.entries.insert(plain.concat([...folded.values()].sort((a, b) => (a.fold_key! < b.fold_key! ? -1 : 1))));
    this.metrics?.activityBatchSize.observe(rows.length);
  }
}

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as PostgreSQL stores it: bounded, with no NUL and no lone surrogate (text and jsonb refuse them). */
function text(value: string, max: number): string {
  const bounded = value.length > max ? value.slice(0, max) : value;
  // Nearly every value is storable as it is: two native checks spare the replacement's scan and copy.
  return bounded.isWellFormed() && !bounded.includes('\u0000') ? bounded : bounded.replace(UNSTORABLE, '\uFFFD');
}

/** Whether an error says the database could not be reached (rather than that it refused the data). */
function unreachable(err: unknown): boolean {
  const code = (err as { code?: unknown; driverError?: { code?: unknown } })?.driverError?.code ?? (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return true;
  // 08: connection exception; 57P0x: shutdown / cannot connect now; 57014: statement timeout; 53300: too many connections.
  return code.startsWith('08') || code.startsWith('57P') || code === '57014' || code === '53300' || code.startsWith('E');
}
