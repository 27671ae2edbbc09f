import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { PrincipalResolver } from '../auth/principal.resolver.js';
import { CACHE_CHANNEL, DatabaseNotifications } from '../database/notifications.service.js';
import { RpcError } from '../protocol/json-rpc.js';
import { SessionsService } from './sessions.service.js';
import type { SessionOutbox } from '../protocol/mcp-method.js';

/** `<session id> <stream token>`: a session's GET stream opened on some instance; older ones elsewhere close. */
export const STREAMS_CHANNEL = 'reblog_streams';

/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEP_ALIVE_MS = 15_000;

interface Stream {
  res: Response;
  /** The credential that opened it, resolved again at each check (revoked: the stream closes). */
  bearer: string;
  token: string;
  /** Whether this instance has seen its own announcement come back (see {@link SessionStreams}). */
  announced: boolean;
  /** The keep-alive comments, once the stream is open. */
  timer: NodeJS.Timeout | null;
}

/**
 * The standalone GET /mcp streams (MCP "Listening for Messages from the Server") this instance holds:
 * one per session, for the server's own messages to it (`notifications/resources/updated`). While
 * it is connected, its session is in use; it closes when the session expires or ends.
 *
 * One stream per session across instances: opening one announces it on {@link STREAMS_CHANNEL}, and an
 * instance holding an older stream of that session closes it. Announcements reach every instance in
 * the order they were sent, so an instance ignores another's announcement that arrives before its
 * own came back: that one is older than its stream. A stream closes when its session ends (DELETE on
 * any instance: `session:<id>` on CACHE_CHANNEL), when the client goes, or when the server stops.
 */
@Injectable()
export class SessionStreams implements OnModuleDestroy, SessionOutbox {
  private readonly log = new Logger(SessionStreams.name);
  private readonly streams = new Map<string, Stream>();
  private stopped = false;
  /** How often a stream gets its keep-alive comment (tests shorten it). */
  keepAliveMs = KEEP_ALIVE_MS;

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly sessions: SessionsService,
    private readonly resolver: PrincipalResolver,
  ) {
    notifications.subscribe(CACHE_CHANNEL, (payload) => {
      if (payload.startsWith('session:')) this.close(payload.slice('session:'.length));
    });
    notifications.subscribe(STREAMS_CHANNEL, (payload) => {
      const at = payload.lastIndexOf(' ');
      const stream = this.streams.get(payload.slice(0, at));
      if (!stream) return;
      if (stream.token === payload.slice(at + 1)) stream.announced = true;
      else if (stream.announced) this.close(payload.slice(0, at));
    });
    // Announcements sent while the connection was down are lost: every stream held now is older than the next one.
    notifications.onReconnect(() => {
      for (const stream of this.streams.values()) stream.announced = true;
    });
  }

  /** Turns `res` into the session's event stream, replacing any other of the session (here or elsewhere). */
  async open(sessionId: string, bearer: string, res: Response): Promise<void> {
    this.close(sessionId);
    // A client reconnecting while the server stops gets an empty stream, which it may retry elsewhere.
    if (this.stopped) {
      res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' }).end();
      return;
    }
    const stream: Stream = { res, bearer, token: randomBytes(12).toString('base64url'), announced: false, timer: null };
    this.streams.set(sessionId, stream);
    res.on('close', () => {
      if (stream.timer) clearInterval(stream.timer);
      if (this.streams.get(sessionId) === stream) this.streams.delete(sessionId);
    });
    // Announced before the client sees the stream: once it has, older streams of the session are closing.
    await this.notifications
      .notify(STREAMS_CHANNEL, `${sessionId} ${stream.token}`)
      .catch((err: Error) => this.log.warn(`Could not announce a stream to other instances: ${err.message}`));
    // Replaced or ended meanwhile.
    if (this.streams.get(sessionId) !== stream) return;
    res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    res.write(': stream open\n\n');
    stream.timer = setInterval(() => this.keepAlive(sessionId, stream), this.keepAliveMs).unref();
  }

  /**
   * A comment that keeps proxies from closing the idle stream, after checking the credential and the
   * session: a stream connected is a session in use (the check counts as its use); a revoked or
   * expired credential, or a session that expired or ended meanwhile, closes the stream, so the
   * client learns it (its next GET is 401 or 404).
   */
  private keepAlive(sessionId: string, stream: Stream): void {
    const check = async () => {
      const principal = await this.resolver.resolve(stream.bearer);
      if (!principal) return false;
      await this.sessions.get(sessionId, principal);
      return true;
    };
    check().then(
      (live) => {
        if (!live) this.closeStream(sessionId, stream);
        else if (!stream.res.writableEnded) stream.res.write(': keep-alive\n\n');
      },
      (err: Error) => {
        if (err instanceof RpcError) this.closeStream(sessionId, stream);
        else this.log.warn(`Could not check the session of a stream: ${err.message}`);
      },
    );
  }

  /**
   * Who holds the session's stream on this instance, as of now: undefined when this instance holds
   * none, null when its credential is no longer valid (revoked, expired).
   */
  async principal(sessionId: string): Promise<Principal | null | undefined> {
    const stream = this.streams.get(sessionId);
    return stream ? this.resolver.resolve(stream.bearer) : undefined;
  }

  private closeStream(sessionId: string, stream: Stream): void {
    if (this.streams.get(sessionId) === stream) this.close(sessionId);
  }

  /** Writes a JSON-RPC message on the session's stream if this instance holds it; answers whether it did. */
  send(sessionId: string, message: object): boolean {
    const stream = this.streams.get(sessionId);
    if (!stream || !stream.res.headersSent || stream.res.writableEnded || stream.res.destroyed) return false;
    stream.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return true;
  }

  /** The sessions whose streams this instance holds. */
  sessionIds(): string[] {
    return [...this.streams.keys()];
  }

  close(sessionId: string): void {
    const stream = this.streams.get(sessionId);
    if (!stream) return;
    this.streams.delete(sessionId);
    if (stream.timer) clearInterval(stream.timer);
    if (!stream.res.writableEnded) stream.res.end();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    for (const sessionId of this.sessionIds()) this.close(sessionId);
  }
}
