import { Inject, Injectable } from '@nestjs/common';
import { parse } from 'cookie';
import type { Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { hashSecret, sameHash } from '../auth/secrets.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { User } from '../users/user.js';
import { BrowserSessionsRepository } from './browser-sessions.repository.js';

export const SESSION_COOKIE = 'rb_session';
/** A sign-in lasts 12 hours. */
export const SESSION_TTL_MS = 12 * 3_600_000;

// Sessions started while serving a request, so the rest of that request sees them (its cookie header is the old one).
const startedBy = new WeakMap<Request, string>();

/** A signed-in person in a browser: who, the hash naming the session, and the token its forms carry. */
export interface BrowserSession {
  idHash: Buffer;
  user: User;
  csrf: string;
}

/**
 * The `rb_session` cookie of the sign-in pages, the consent page and the owners' console: a random
 * secret whose hash names a row of `browser_sessions`, so every instance knows it and signing out or
 * disabling the person ends it everywhere.
 */
@Injectable()
export class BrowserSessionsService {
  private readonly secure: boolean;

  constructor(
    private readonly sessions: BrowserSessionsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.secure = config.publicUrl.startsWith('https:');
  }

  /**
   * Signs the person in: a new session and its cookie. With `req`, the session the request came with
   * (another person's, or an older one) ends, and the rest of this request sees the new one
   * ({@link current}), as a sign-in by the gateway's header must before the page it asked for.
   */
  async start(res: Response, userId: string, req?: Request): Promise<void> {
    const previous = req && this.secretOf(req);
    if (previous) await this.sessions.delete(hashSecret(previous));
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    await this.sessions.insert(hashSecret(secret), userId, randomBytes(24).toString('base64url'), expiresAt);
    res.cookie(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'lax', path: '/', secure: this.secure, maxAge: SESSION_TTL_MS });
    if (req) startedBy.set(req, secret);
  }

  /** The session the request's cookie names, or null (none, unknown, expired, or its person disabled). */
  async current(req: Request): Promise<BrowserSession | null> {
    const secret = this.secretOf(req);
    if (!secret || secret.length > 100) return null;
    const found = await this.sessions.find(hashSecret(secret));
    if (!found) return null;
    const user = found.user;
    return { idHash: found.id_hash, csrf: found.csrf, user: { ...user, created_at: new Date(user.created_at), disabled_at: null } };
  }

  /** Whether a form's `csrf` field is this session's token (compared in constant time). */
  csrfMatches(session: BrowserSession, token: unknown): boolean {
    return typeof token === 'string' && sameHash(hashSecret(token), hashSecret(session.csrf));
  }

  /** Signs out: the row goes (every instance) and the cookie is cleared. */
  async end(req: Request, res: Response): Promise<void> {
    const secret = this.secretOf(req);
    if (secret) await this.sessions.delete(hashSecret(secret));
    startedBy.delete(req);
    res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: this.secure });
  }

  /** The session secret of this request: the one started while serving it, else its cookie's. */
  private secretOf(req: Request): string | undefined {
    return startedBy.get(req) ?? parse(req.headers.cookie ?? '')[SESSION_COOKIE];
  }

  /** Deletes up to `limit` expired sessions (the purge runs it in batches). */
  purge(limit: number): Promise<number> {
    return this.sessions.purge(limit);
  }
}
