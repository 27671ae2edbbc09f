import { Inject, Injectable } from '@nestjs/common';
import { hashSecret, newSecret } from '../auth/secrets.js';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { User } from '../users/user.js';
import { UsersService } from '../users/users.service.js';
import { LoginLinksRepository } from './login-links.repository.js';
import { safeReturnTo } from './return-to.js';

export const LOGIN_LINK_PREFIX = 'rbl_';
/** A link lives 15 minutes unless asked otherwise. */
export const DEFAULT_LINK_TTL_S = 900;

/** A new login link, as the admin API answers it: `token` is the secret, shown once. */
export interface LoginLinkView {
  url: string;
  token: string;
  expires_at: Date;
}

/** Why a link did not sign in; each reason's sentence says the word (used, expired, unknown, disabled). */
export type LinkRefusal = 'used' | 'expired' | 'unknown' | 'disabled';

/** A link that was refused, and why. */
export class LinkRefused extends Error {
  override name = 'LinkRefused';
  constructor(readonly reason: LinkRefusal) {
    super(`The sign-in link was refused: ${reason}.`);
  }
}

/**
 * Single-use sign-in links (spec/oauth.md "Sign-in", `link`): made by the operator for a person
 * (admin API, `npm run login-link`, the demo owner's on the first start), kept as the hash of their
 * random `rbl_` token, and consumed once by the sign-in form.
 */
@Injectable()
export class LoginLinksService {
  constructor(
    private readonly links: LoginLinksRepository,
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A link for the user `userId`: 404 when unknown, 422 when disabled, 400 when `return_to` is not a path here. */
  async create(userId: string, options: { expires_in?: number; return_to?: string } = {}): Promise<LoginLinkView> {
    return this.createFor(await this.users.get(userId), options);
  }

  /** A link for the person with this email (any case): 404 when there is none. */
  async createForEmail(email: string, options: { expires_in?: number; return_to?: string } = {}): Promise<LoginLinkView & { user: User }> {
    const user = await this.users.findByEmail(email.trim());
    if (!user) throw new DomainError('not_found', `No user has the email "${email}": add them first (POST /admin/v1/users).`);
    return { ...(await this.createFor(user, options)), user };
  }

  /**
   * Consumes the link of `token`, once: answers its person and its `return_to`. A used, expired or
   * unknown token, or a disabled person, is a {@link LinkRefused} and consumes nothing.
   */
  /** Deletes up to `limit` links expired for a day (the purge runs it in batches). */
  purge(limit: number): Promise<number> {
    return this.links.purge(limit);
  }

  async consume(token: string): Promise<{ userId: string; returnTo: string | null }> {
    const hash = hashSecret(token);
    const link = await this.links.consume(hash);
    if (link) return { userId: link.user_id, returnTo: link.return_to };
    const state = await this.links.state(hash);
    throw new LinkRefused(!state ? 'unknown' : state.disabled ? 'disabled' : state.used ? 'used' : 'expired');
  }

  private async createFor(user: User, { expires_in, return_to }: { expires_in?: number; return_to?: string }): Promise<LoginLinkView> {
    if (user.disabled_at) {
      throw new DomainError('unprocessable', `User ${user.id} is disabled: enable them (PATCH /admin/v1/users/${user.id} {"disabled": false}) before making a sign-in link.`);
    }
    const returnTo = return_to === undefined ? null : safeReturnTo(return_to, this.config.publicUrl);
    if (return_to !== undefined && returnTo === null) {
      const message = 'return_to must be a path on this server, such as /console/ (not a URL, not //host).';
      throw new DomainError('validation_failed', `Invalid request: ${message}`, [message]);
    }
    const { secret, hash } = newSecret(LOGIN_LINK_PREFIX);
    const expiresAt = await this.links.insert(hash, user.id, returnTo, expires_in ?? DEFAULT_LINK_TTL_S);
    const query = new URLSearchParams({ token: secret, ...(returnTo ? { return_to: returnTo } : {}) });
    return { url: `${this.config.publicUrl}/oauth/login?${query}`, token: secret, expires_at: expiresAt };
  }
}
