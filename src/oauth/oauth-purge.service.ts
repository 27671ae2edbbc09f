import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { EnterpriseAccessService } from '../identity-providers/enterprise-access.service.js';
import { LoginLinksService } from '../login-links/login-links.service.js';
import { BrowserSessionsService } from '../web/browser-sessions.service.js';
import { AuthorizationsRepository } from './authorize/authorizations.repository.js';
import { OAuthClientsService } from './clients/oauth-clients.service.js';
import { GrantsRepository } from './tokens/grants.repository.js';

/** How often each instance purges what sign-in and the OAuth server no longer need. */
export const OAUTH_PURGE_EVERY_MS = 10 * 60 * 1_000;
/** Rows deleted per statement, so a large purge never holds many locks at once. */
const BATCH = 500;

/** Runs `step` until it deletes less than a batch; answers the total. */
async function inBatches(step: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step(BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * Deletes, on a timer in every instance (as MCP sessions are purged), the clients that never got a
 * grant within a day, consent requests expired for an hour, codes expired for a day (a replay is
 * still recognised until then), tokens expired for an hour, expired browser sessions, login links
 * expired for a day, and the `jti`s of ID-JAGs expired for 5 minutes. Every statement works by Postgres' clock, in batches that skip the rows
 * another instance holds, so instances purging at once do not wait on each other.
 */
@Injectable()
export class OAuthPurgeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(OAuthPurgeService.name);
  private timer: NodeJS.Timeout | null = null;
  private purging: Promise<unknown> | null = null;

  constructor(
    private readonly clients: OAuthClientsService,
    private readonly authorizations: AuthorizationsRepository,
    private readonly grants: GrantsRepository,
    private readonly browserSessions: BrowserSessionsService,
    private readonly loginLinks: LoginLinksService,
    private readonly enterprise: EnterpriseAccessService,
  ) {}

  /** Runs every purge once; answers what each deleted. */
  async purge(): Promise<{
    clients: number;
    requests: number;
    codes: number;
    tokens: number;
    browserSessions: number;
    loginLinks: number;
    idJagUses: number;
  }> {
    return {
      clients: await inBatches((n) => this.clients.purgeUnused(n)),
      requests: await inBatches((n) => this.authorizations.purgeRequests(n)),
      codes: await inBatches((n) => this.grants.purgeCodes(n)),
      tokens: await inBatches((n) => this.grants.purgeTokens(n)),
      browserSessions: await inBatches((n) => this.browserSessions.purge(n)),
      loginLinks: await inBatches((n) => this.loginLinks.purge(n)),
      idJagUses: await inBatches((n) => this.enterprise.purgeUses(n)),
    };
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      this.purging = this.purge()
        .catch((err: Error) => this.log.warn(`Could not purge OAuth clients and tokens: ${err.message}`))
        .finally(() => {
          this.purging = null;
          if (this.timer) this.timer = setTimeout(tick, OAUTH_PURGE_EVERY_MS).unref();
        });
    };
    this.timer = setTimeout(tick, 15_000).unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.purging;
  }
}
