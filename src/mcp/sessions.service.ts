import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { CACHE_CHANNEL, DatabaseNotifications } from '../database/notifications.service.js';
import { SharedReads } from '../common/shared-reads.js';
import { isLogLevel, type LogLevel } from '../protocol/client-capabilities.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import { SessionsRepository, type SessionRow } from './sessions.repository.js';

export interface SessionInfo {
  id: string;
  client: { name: string; version: string } | null;
  protocolVersion: string;
  /** The client's declared capabilities (known keys only; see client-capabilities.ts). */
  capabilities: Record<string, Record<string, unknown>>;
  /** The level `logging/setLevel` chose; null until then (no log messages are sent). */
  logLevel: LogLevel | null;
}

interface Cached {
  row: SessionRow;
  until: number;
  /** When it was last touched, on this process's clock. */
  lastUsed: number;
}

/** How long a session read from Postgres is reused by this instance (an ended one is dropped when told). */
const CACHE_MS = 2_000;
const MAX_CACHED = 20_000;
/** `last_used_at` is written when older than this fraction of the TTL: not on every request. */
const TOUCH_FRACTION = 0.1;
/** How often each instance purges expired and ended sessions. */
export const SESSION_PURGE_EVERY_MS = 10 * 60 * 1_000;
/** Sessions deleted per statement, so a large purge never holds many locks at once. */
const PURGE_BATCH = 500;

/**
 * MCP sessions live in Postgres, bound to the credential that opened them, so any instance behind
 * the gateway serves them. Unknown, ended, expired and foreign ids all answer the same 404.
 *
 * A session expires after `SESSION_IDLE_TTL_S` without a request. Its `last_used_at` is only
 * written when it is older than a tenth of the TTL, so a session in use costs one write per tenth
 * of the TTL, not one per request; an idle session therefore expires between 0.9 and 1 TTL after
 * its last request. Every instance purges expired and ended sessions on a timer, in batches.
 */
@Injectable()
export class SessionsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(SessionsService.name);
  private readonly cache = new Map<string, Cached>();
  /** Reads under way, by session: a busy session's expiry from the cache costs one query. */
  private readonly reads = new SharedReads<Cached | null>();
  /** Bumped whenever a session is dropped from the cache: a read that started before then is not cached. */
  private generation = 0;
  private readonly ttlMs: number;
  private timer: NodeJS.Timeout | null = null;
  private purging: Promise<unknown> | null = null;

  constructor(
    private readonly sessions: SessionsRepository,
    notifications: DatabaseNotifications,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    this.ttlMs = config.sessionIdleTtlS * 1_000;
    // A session ended on another instance is dropped here at once.
    notifications.subscribe(CACHE_CHANNEL, (payload) => {
      if (payload.startsWith('session:')) this.forget(payload.slice('session:'.length));
    });
    notifications.onReconnect(() => this.forget());
  }

  async create(
    principal: Principal,
    protocolVersion: string,
    client: { name: string; version: string } | null,
    capabilities: Record<string, Record<string, unknown>> = {},
  ): Promise<SessionInfo> {
    // 192 random bits, URL-safe: visible ASCII as the transport requires.
    const id = randomBytes(24).toString('base64url');
    await this.sessions.insert({ id, accountId: principal.accountId, credentialId: principal.credential.id, protocolVersion, client, capabilities });
    return { id, client, protocolVersion, capabilities, logLevel: null };
  }

  /** `logging/setLevel`: from now on, on every instance (their cached copies are dropped through CACHE_CHANNEL). */
  async setLogLevel(session: SessionInfo, principal: Principal, level: LogLevel): Promise<void> {
    const set = await this.sessions.setLogLevel(session.id, principal.credential.id, level);
    this.forget(session.id);
    if (!set) throw notFound();
  }

  /**
   * The credential's live session `id` (else the 404 is thrown). Answered at once (no promise) when this
   * instance has it cached and its use need not be recorded yet, as for nearly every request.
   */
  get(id: string, principal: Principal): SessionInfo | Promise<SessionInfo> {
    const now = Date.now();
    const entry = this.cache.get(id);
    return entry && entry.until >= now ? this.use(id, entry, principal, now) : this.read(id, principal, now);
  }

  private async read(id: string, principal: Principal, now: number): Promise<SessionInfo> {
    // By account too: a read for another account's credential finds nothing, and must not answer this one.
    const entry = await this.reads.get(`${principal.accountId} ${id}`, () => this.load(id, principal.accountId, now));
    if (!entry) throw notFound();
    return this.use(id, entry, principal, now);
  }

  /** The session from Postgres, cached unless it was dropped from the cache while being read. */
  private async load(id: string, accountId: string, now: number): Promise<Cached | null> {
    const generation = this.generation;
    const found = await this.sessions.find(id, accountId);
    if (!found) return null;
    // Idle time from Postgres' clock, kept on ours: instances with skewed clocks agree.
    const entry = { row: found, until: now + CACHE_MS, lastUsed: now - Number(found.idle_ms) };
    if (generation === this.generation) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(id, entry);
    }
    return entry;
  }

  /**
   * Drops a session (or every session) from the cache, and every read under way (they are few, and
   * keyed by account too): later requests read afresh.
   */
  private forget(id?: string): void {
    this.generation++;
    this.reads.forget();
    if (id === undefined) this.cache.clear();
    else this.cache.delete(id);
  }

  private use(id: string, entry: Cached, principal: Principal, now: number): SessionInfo | Promise<SessionInfo> {
    const s = entry.row;
    if (s.ended_at || s.credential_id !== principal.credential.id) throw notFound();
    const idle = now - entry.lastUsed;
    if (idle >= this.ttlMs) throw notFound();
    const info: SessionInfo = {
      id: s.id,
      protocolVersion: s.protocol_version,
      client: s.client_name !== null ? { name: s.client_name, version: s.client_version ?? '' } : null,
      capabilities: (s.client_capabilities ?? {}) as SessionInfo['capabilities'],
      logLevel: isLogLevel(s.log_level) ? s.log_level : null,
    };
    if (idle < this.ttlMs * TOUCH_FRACTION) return info;
    // Set first: requests arriving meanwhile do not write too. A failed write is tried again when the entry is re-read.
    entry.lastUsed = now;
    return this.sessions.touch(id).then(
      () => info,
      (err: Error) => {
        this.log.warn(`Could not record the use of a session: ${err.message}`);
        return info;
      },
    );
  }

  /** Ends the credential's live session (else 404), answering the client it was opened by. */
  async end(id: string, principal: Principal): Promise<SessionInfo['client']> {
    const ended = await this.sessions.end(id, principal.credential.id, this.config.sessionIdleTtlS);
    this.forget(id);
    if (!ended) throw notFound();
    this.metrics?.sessionEnded(ended.seconds);
    return ended.client;
  }

  /**
   * Deletes expired and ended sessions, by Postgres' clock; safe to run on every instance at once (each
   * row is deleted, and an expired one's duration recorded, by one instance only).
   */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const { n, expiredSeconds } = await this.sessions.purge(this.config.sessionIdleTtlS, PURGE_BATCH);
      for (const seconds of expiredSeconds) this.metrics?.sessionEnded(seconds);
      purged += n;
      if (n < PURGE_BATCH) return purged;
    }
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      this.purging = this.purgeExpired()
        .catch((err: Error) => this.log.warn(`Could not purge expired sessions: ${err.message}`))
        .finally(() => {
          this.purging = null;
          if (this.timer) this.timer = setTimeout(tick, SESSION_PURGE_EVERY_MS).unref();
        });
    };
    this.timer = setTimeout(tick, 10_000).unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.purging;
  }
}

function notFound(): RpcError {
  return new RpcError(RpcCode.SessionNotFound, 'Session not found: it ended, expired or belongs to another credential. Initialize a new session.', 404);
}
