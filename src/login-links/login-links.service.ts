import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { Inject, Injectable } from '@nestjs/common';
import { hashSecret, newSecret } from '../auth/secrets.js';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { User } from '../users/user.js';
import { UsersService } from '../users/users.service.js';
import { LoginLinksRepository, type LinkDescription, type LinkMaker } from './login-links.repository.js';
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

/**
 * Why a link did not sign in; each reason's sentence says the word (used, expired, unknown, disabled;
 * outreached: made in the console, its person now belongs to an account its maker does not own).
 */
export type LinkRefusal = 'used' | 'expired' | 'unknown' | 'disabled' | 'outreached';

/** What a link is made with: how long it lives, where it leads, and, when made in the console, where and by whom. */
export interface LinkOptions {
  expires_in?: number;
  return_to?: string;
  madeBy?: LinkMaker;
}

/** Why an owner may not make `email` a link in the console: the person belongs to accounts they do not own. */
const outreached = (email: string) => `${email} belongs to other accounts: they sign in themselves, or ask your operator.`;

/** A link that was refused, and why. */
export class LinkRefused extends Error {
  override name = 'LinkRefused';
  constructor(readonly reason: LinkRefusal) {
    super(`The sign-in link was refused: ${reason}.`);
  }
}

/**
 * Single-use sign-in links (README.md#signing-in): made by the operator for anyone (admin API, `npm run
 * login-link`, the demo owner's on the first start), or by an account owner in the console for a
 * person whose every account that owner owns; kept as the hash of their random `rbl_` token, and
 * consumed once by the sign-in form.
 */
@Injectable()
export class LoginLinksService {
  constructor(
    private readonly links: LoginLinksRepository,
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /**
   * A link for the user `userId`: 404 when unknown, 422 when disabled, 400 when `return_to` is not a
   * path here. With `madeBy` (the console), 422 too when the person belongs to an account that the
   * owner who asks does not own: a link signs its person in everywhere they belong.
   */
  async create(userId: string, options: LinkOptions = {}): Promise<LoginLinkView> {
    return this.createFor(await this.users.get(userId), options);
  }

  /** A link for the person with this email (any case): 404 when there is none. */
  async createForEmail(email: string, options: LinkOptions = {}): Promise<LoginLinkView & { user: User }> {
    const user = await this.users.findByEmail(email.trim());
    if (!user) throw new DomainError('not_found', `No user has the email "${email}": add them first (POST /admin/v1/users).`);
    return { ...(await this.createFor(user, options)), user };
  }

  /**
   * Why `maker` may not make `user` a link in the console (the sentence {@link create}'s 422 gives), or
   * null when they may: the same rule as at the making, asked before it.
   */
  async outreach(user: { id: string; email: string }, maker: LinkMaker): Promise<string | null> {
    return (await this.links.withinReach(user.id, maker)) ? null : outreached(user.email);
  }

  /** Deletes up to `limit` links expired for a day (the purge runs it in batches). */
  purge(limit: number): Promise<number> {
    return this.links.purge(limit);
  }

  /** Whose sign-in the link of `token` is (and who made it where), while it would sign in; else null. Consumes nothing. */
  describe(token: string): Promise<LinkDescription | null> {
    return this.links.describe(hashSecret(token));
  }

  /**
   * Consumes the link of `token`, once: answers its person and its `return_to`. A used, expired or
   * unknown token, a disabled person, or a console link whose person now reaches further than its
   * maker, is a {@link LinkRefused} and consumes nothing.
   */
  async consume(token: string): Promise<{ userId: string; returnTo: string | null }> {
    const hash = hashSecret(token);
    const link = await this.links.consume(hash);
    if (link) return { userId: link.user_id, returnTo: link.return_to };
    const state = await this.links.state(hash);
    throw new LinkRefused(!state ? 'unknown' : state.disabled ? 'disabled' : state.used ? 'used' : state.expired ? 'expired' : 'outreached');
  }

  private async createFor(user: User, { expires_in, return_to, madeBy }: LinkOptions): Promise<LoginLinkView> {
    if (user.disabled_at) {
      throw new DomainError(
        'unprocessable',
        `User ${user.id} is disabled: enable them (PATCH /admin/v1/users/${user.id} {"disabled": false}) before making a sign-in link.`,
      );
    }
    const returnTo = return_to === undefined ? null : safeReturnTo(return_to, this.config.publicUrl);
    if (return_to !== undefined && returnTo === null) {
      const message = 'return_to must be a path on this server, such as /console/ (not a URL, not //host).';
      throw new DomainError('validation_failed', `Invalid request: ${message}`, [message]);
    }
    const { secret, hash } = newSecret(LOGIN_LINK_PREFIX);
    const ttl = expires_in ?? DEFAULT_LINK_TTL_S;
    const expiresAt = await this.db.transaction(async (tx) => {
      const made = madeBy
        ? await this.links.insertByOwner(hash, user.id, returnTo, ttl, madeBy, tx)
        : await this.links.insert(hash, user.id, returnTo, ttl, tx);
      // An owner's link is an act in their account; the operator's is in none (their trail shows it).
      if (made)
        await this.audit.record(tx, {
          action: 'login_link.created',
          accountId: madeBy?.accountId ?? null,
          target: { user_id: user.id },
          change: { after: { expires_at: made, return_to: returnTo } },
        });
      return made;
    });
    if (!expiresAt) throw new DomainError('unprocessable', outreached(user.email));
    const query = new URLSearchParams({ token: secret, ...(returnTo ? { return_to: returnTo } : {}) });
    return { url: `${this.config.publicUrl}/oauth/login?${query}`, token: secret, expires_at: expiresAt };
  }
}
