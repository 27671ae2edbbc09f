import { Inject, Injectable } from '@nestjs/common';
import { parse } from 'cookie';
import type { Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { hashSecret, sameHash } from '../auth/secrets.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';

/** The pre-session cookie lives as long as a sign-in page may stay open. */
const TTL_MS = 2 * 3_600_000;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

/**
 * CSRF protection of the sign-in form, which has no session yet to hold a token: a double-submit
 * cookie. The page sets a random pre-session cookie (HttpOnly, SameSite=Strict) and puts the same
 * value in the form; a post counts only when the two are equal. Another site can make a browser
 * post the form but can neither read nor set that cookie (`__Host-` prefix on https: no subdomain
 * can plant one), and a strict cookie is not sent with a cross-site post at all. No server secret
 * and no row are needed, so any instance checks it. An HMAC of a pre-session cookie would need a
 * key shared by every instance, which the configuration does not have.
 */
@Injectable()
export class LoginCsrf {
  private readonly secure: boolean;
  private readonly cookieName: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.secure = config.publicUrl.startsWith('https:');
    this.cookieName = this.secure ? '__Host-rb_login_csrf' : 'rb_login_csrf';
  }

  /** The token for a sign-in form: the browser's pre-session cookie, set now (again) so it outlives the page. */
  token(req: Request, res: Response): string {
    const known = this.cookie(req);
    const token = known ?? randomBytes(24).toString('base64url');
    res.cookie(this.cookieName, token, { httpOnly: true, sameSite: 'strict', path: '/', secure: this.secure, maxAge: TTL_MS });
    return token;
  }

  /** Whether the form's `csrf` field equals the request's pre-session cookie (in constant time). */
  matches(req: Request, field: unknown): boolean {
    const cookie = this.cookie(req);
    return !!cookie && typeof field === 'string' && sameHash(hashSecret(field), hashSecret(cookie));
  }

  private cookie(req: Request): string | undefined {
    const value = parse(req.headers.cookie ?? '')[this.cookieName];
    return value && TOKEN.test(value) ? value : undefined;
  }
}
