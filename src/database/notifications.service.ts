import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { run, sql, type Sql } from './sql.js';

/**
 * What changed that instances may hold in a cache: `credential:<secret hash, base64>` (one API key
 * or admin grant changed), `credentials` (every principal: a grant, a role, a person, a project
 * changed), both sent by the database's triggers (src/database/migrations/*-principal-change-triggers.ts);
 * `session:<id>` (ended).
 */
export const CACHE_CHANNEL = 'reblog_cache';

/** SQL sending `payload` (an SQL expression) on {@link CACHE_CHANNEL}, delivered when its transaction commits. */
export const notifyCache = (payload: string) => `pg_notify('${CACHE_CHANNEL}', ${payload})`;

const RECONNECT_MS = 1_000;

/** Where {@link DatabaseNotifications.caughtUp} sends the markers it waits for. */
const MARK_CHANNEL = 'reblog_mark';
/** How long a marker is waited for before giving up (a connection that hangs without dropping). */
const MARK_WAIT_MS = 5_000;

const NOTIFY = sql<[channel: string, payload: string]>('notifications.notify', `SELECT pg_notify($1, $2)`);

/** `LISTEN <channel>` (a channel is a name, not a parameter), declared once per channel. */
const listens = new Map<string, Sql<[], never>>();
function listen(channel: string): Sql<[], never> {
  let statement = listens.get(channel);
  if (!statement) listens.set(channel, (statement = sql(`notifications.listen_${channel}`, `LISTEN ${channel}`)));
  return statement;
}

type Handler = (payload: string) => void;

/**
 * The process's one LISTEN connection (a pooled connection cannot hold a LISTEN), shared by every
 * channel: job events, cache invalidations. Subscribers name a channel and get its payloads. The
 * connection is re-opened when it drops; notifications sent in between are lost, so subscribers are
 * told (`onReconnect`) and make up for it (read the table again, drop their caches).
 */
@Injectable()
export class DatabaseNotifications implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger(DatabaseNotifications.name);
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly reconnectListeners = new Set<(since: Date) => void>();
  private client: pg.Client | null = null;
  /** When the connection was last lost: notifications from then on may not have arrived. */
  private lostAt = new Date();
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** This process's markers still travelling, by payload. */
  private readonly marks = new Map<string, () => void>();
  private readonly markPrefix = `${randomBytes(6).toString('hex')}:`;
  private markCount = 0;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.subscribe(MARK_CHANNEL, (payload) => this.marks.get(payload)?.());
  }

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    this.releaseMarks();
  }

  /** Payloads sent on `channel` by any instance. Returns the function that unsubscribes. */
  subscribe(channel: string, handler: Handler): () => void {
    let handlers = this.handlers.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.handlers.set(channel, handlers);
      // A channel first asked for after the connection was opened.
      if (this.client) run(this.client, listen(channel), []).catch((err: Error) => this.log.warn(`LISTEN ${channel} failed: ${err.message}`));
    }
    handlers.add(handler);
    return () => handlers.delete(handler);
  }

  /** Sends `payload` on `channel` to every instance (this one too), at once (its own statement). */
  async notify(channel: string, payload: string): Promise<void> {
    await run(this.db, NOTIFY, [channel, payload]);
  }

  /**
   * Resolves once this process has received, and its subscribers have handled, every notification
   * committed before the call: it sends a marker of its own and waits for it to come back, and
   * Postgres delivers notifications in commit order. A change that announced itself (a trigger) is
   * so known here before the caller answers. Without a connection it resolves at once (subscribers
   * make up for what they missed when it is back: {@link onReconnect}), as after {@link MARK_WAIT_MS}.
   */
  async caughtUp(): Promise<void> {
    if (!this.client) return;
    const mark = `${this.markPrefix}${++this.markCount}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<void>((resolve) => {
      this.marks.set(mark, resolve);
      timer = setTimeout(resolve, MARK_WAIT_MS);
      timer.unref();
    });
    try {
      await this.notify(MARK_CHANNEL, mark);
      await heard;
    } finally {
      clearTimeout(timer);
      this.marks.delete(mark);
    }
  }

  /** Called after the connection came back with the time it was lost: notifications since then may have been missed. */
  onReconnect(listener: (since: Date) => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  private async connect(reconnecting = false): Promise<void> {
    const url = (this.db.options as { url?: string }).url;
    const client = new pg.Client({ connectionString: url, application_name: 'reblog-mcp-listen', connectionTimeoutMillis: 5_000, keepAlive: true });
    client.on('notification', (msg) => {
      for (const handler of this.handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
    });
    // Only the current connection's loss matters; errors of a connection being set up reject connect().
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await run(client, listen(channel), []);
    } catch (err) {
      await client.end().catch(() => undefined);
      if (!reconnecting) throw err;
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (reconnecting) {
      this.log.log('Database notifications: listening again');
      for (const listener of this.reconnectListeners) listener(this.lostAt);
    }
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.stopped || this.client !== client) return;
    this.client = null;
    this.lostAt = new Date();
    this.releaseMarks();
    this.log.warn(`Database notifications: the LISTEN connection dropped${err ? ` (${err.message})` : ''}; reconnecting`);
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  /** Stops waiting for markers the lost connection will not deliver. */
  private releaseMarks(): void {
    for (const release of this.marks.values()) release();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect(true);
    }, RECONNECT_MS);
  }
}
