import { Injectable } from '@nestjs/common';
import { SharedReads } from '../common/shared-reads.js';
import { CACHE_CHANNEL, DatabaseNotifications } from '../database/notifications.service.js';
import { CredentialsRepository, type PrincipalRow } from './credentials.repository.js';
import type { Principal, ReachableProject } from './principal.js';
import { hashSecretBase64, sameHash } from './secrets.js';

/** How long a resolved principal (or the absence of one) is reused before Postgres is asked again. */
export const PRINCIPAL_TTL_MS = 3_000;
/** Most principals one instance keeps; as many unknown tokens are remembered, apart. */
export const MAX_CACHED_PRINCIPALS = 10_000;

interface Cached {
  principal: Principal;
  expiresAt: number;
  /** A grant's own expiry, checked on every use even while cached. */
  credentialExpiresAt: number;
}

/**
 * Turns a bearer secret into a {@link Principal}, with a short cache so the MCP hot path rarely
 * queries. Whatever changes a principal (a revoked or narrowed credential, a role, a disabled person,
 * a project's settings) is announced by the database itself: triggers on the tables the lookup reads
 * notify {@link CACHE_CHANNEL} when the change commits, and every instance, this one included, drops
 * what it cached. No caller has to remember; a service that made the change waits until its own
 * instance heard it ({@link DatabaseNotifications.caughtUp}) so its next request sees it too. The TTL
 * only bounds what a lost notification could leave behind.
 *
 * Tokens that name no valid credential are remembered in a cache of their own, so a flood of made-up
 * tokens never pushes out the principals of real clients. Both are bounded maps that drop their
 * oldest entry when full: entries are re-inserted when refreshed, so insertion order is expiry
 * order, and the oldest is the one that would expire first anyway.
 */
@Injectable()
export class PrincipalResolver {
  private readonly cache = new Map<string, Cached>();
  /** Hashes of tokens that named no valid credential, and until when that answer is reused. */
  private readonly unknown = new Map<string, number>();
  /** Lookups under way, by token hash: a busy credential's expiry from the cache costs one query. */
  private readonly reads = new SharedReads<Principal | null>();
  /**
   * Bumped by every invalidation. A resolve whose read started before one does not cache its
   * answer: it may have read the credential before the revocation committed, and storing it after
   * the invalidation ran would bring the revoked principal back for a TTL.
   */
  private generation = 0;

  constructor(
    private readonly credentials: CredentialsRepository,
    notifications: DatabaseNotifications,
  ) {
    notifications.subscribe(CACHE_CHANNEL, (payload) => {
      if (payload === 'credentials') this.invalidate();
      else if (payload.startsWith('credential:')) this.invalidate(payload.slice('credential:'.length));
    });
    // Notifications may have been missed while the connection was down.
    notifications.onReconnect(() => this.invalidate());
  }

  /**
   * The principal `bearer` names, or null. Answered at once (no promise) when this instance knows the
   * answer, a cached principal or unknown token, as for nearly every request: /mcp's checks then run
   * without a round of promises for it.
   */
  resolve(bearer: string): Principal | null | Promise<Principal | null> {
    if (!/^rb[kg]_[A-Za-z0-9_-]{20,100}$/.test(bearer)) return null;
    const key = hashSecretBase64(bearer);
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > now) return hit.credentialExpiresAt > now ? hit.principal : null;
    if ((this.unknown.get(key) ?? 0) > now) return null;
    return this.reads.get(key, () => this.lookUp(key, now));
  }

  private async lookUp(key: string, now: number): Promise<Principal | null> {
    const generation = this.generation;
    const hash = Buffer.from(key, 'base64');
    const row = await this.credentials.findPrincipal(hash);
    const principal = row && sameHash(row.secret_hash, hash) ? toPrincipal(row) : null;
    const credentialExpiresAt = row?.expires_at ? new Date(row.expires_at).getTime() : Infinity;
    if (generation === this.generation) {
      if (principal) remember(this.cache, key, { principal, expiresAt: now + PRINCIPAL_TTL_MS, credentialExpiresAt });
      else remember(this.unknown, key, now + PRINCIPAL_TTL_MS);
    }
    return principal && credentialExpiresAt > now ? principal : null;
  }

  /**
   * Drops one cached principal, or all of them (unknown tokens stay unknown: nothing makes one valid),
   * and lets no later request wait for a lookup already under way: it may have read the credential
   * before the change.
   */
  private invalidate(key?: string): void {
    this.generation++;
    this.reads.forget(key);
    if (key === undefined) this.cache.clear();
    else this.cache.delete(key);
  }
}

/** Sets `key` last in `map`, first dropping the oldest entry when the map is full. */
function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  if (map.size >= MAX_CACHED_PRINCIPALS) map.delete(map.keys().next().value!);
  map.set(key, value);
}

function toPrincipal(row: PrincipalRow): Principal {
  const projects = new Map<string, ReachableProject>();
  for (const p of row.projects ?? []) {
    projects.set(p.id, { id: p.id, name: p.name, role: p.role, disabledTools: new Set(p.disabled_tools) });
  }
  return {
    accountId: row.account_id,
    credential: { type: row.type, id: row.id, name: row.name },
    scopes: new Set(row.scopes),
    projects,
  };
}
