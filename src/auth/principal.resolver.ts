import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ProjectRole, Scope } from '../common/tool-names.js';
import { CACHE_CHANNEL, DatabaseNotifications, notifyCache } from '../database/notifications.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { CredentialType } from './credential.entity.js';
import type { Principal, ReachableProject } from './principal.js';
import { hashSecret, sameHash } from './secrets.js';

/** How long a resolved principal (or the absence of one) is reused before Postgres is asked again. */
export const PRINCIPAL_TTL_MS = 3_000;
/** Most principals one instance keeps; as many unknown tokens are remembered, apart. */
export const MAX_CACHED_PRINCIPALS = 10_000;

interface Row {
  id: string;
  account_id: string;
  type: CredentialType;
  name: string;
  secret_hash: Buffer;
  scopes: Scope[];
  expires_at: Date | null;
  projects: { id: string; name: string; role: ProjectRole; disabled_tools: string[] }[] | null;
}

interface Cached {
  principal: Principal;
  expiresAt: number;
  /** A grant's own expiry, checked on every use even while cached. */
  credentialExpiresAt: number;
}

/**
 * Turns a bearer secret into a {@link Principal}, with a short cache so the MCP hot path rarely
 * queries. What invalidates a cached principal (a revoked credential, a changed project) is dropped
 * at once in this instance and told to every other one through {@link CACHE_CHANNEL}; the TTL only
 * bounds what a lost notification could leave behind.
 *
 * Tokens that name no valid credential are remembered in a cache of their own, so a flood of made-up
 * tokens never pushes out the principals of real clients. Both are bounded maps that drop their
 * oldest entry when full: entries are re-inserted when refreshed, so insertion order is expiry
 * order, and the oldest is the one that would expire first anyway.
 */
@Injectable()
export class PrincipalResolver {
  private readonly log = new Logger(PrincipalResolver.name);
  private readonly cache = new Map<string, Cached>();
  /** Hashes of tokens that named no valid credential, and until when that answer is reused. */
  private readonly unknown = new Map<string, number>();
  /**
   * Bumped by every invalidation. A resolve whose read started before one does not cache its
   * answer: it may have read the credential before the revocation committed, and storing it after
   * the invalidation ran would bring the revoked principal back for a TTL.
   */
  private generation = 0;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    projects: ProjectsService,
    notifications: DatabaseNotifications,
  ) {
    // A changed project (name, disabled tools) changes what every principal reaching it may do.
    projects.onChange(() => {
      this.invalidate();
      this.broadcast('credentials').catch((err: Error) => this.log.warn(`Telling other instances of a project change failed: ${err.message}`));
    });
    notifications.subscribe(CACHE_CHANNEL, (payload) => {
      if (payload === 'credentials') this.invalidate();
      else if (payload.startsWith('credential:')) this.invalidate(payload.slice('credential:'.length));
    });
    // Notifications may have been missed while the connection was down.
    notifications.onReconnect(() => this.invalidate());
  }

  async resolve(bearer: string): Promise<Principal | null> {
    if (!/^rb[kg]_[A-Za-z0-9_-]{20,100}$/.test(bearer)) return null;
    const hash = hashSecret(bearer);
    const key = hash.toString('base64');
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > now) return hit.credentialExpiresAt > now ? hit.principal : null;
    if ((this.unknown.get(key) ?? 0) > now) return null;

    const generation = this.generation;
    const [row] = (await this.db.query(
      `SELECT c.id, c.account_id, c.type, c.name, c.secret_hash, c.scopes, c.expires_at,
              (SELECT json_agg(json_build_object('id', p.id, 'name', p.name, 'role', cp.role, 'disabled_tools', p.disabled_tools) ORDER BY p.id)
                 FROM credential_projects cp JOIN projects p ON p.id = cp.project_id AND p.account_id = c.account_id
                WHERE cp.credential_id = c.id) AS projects
         FROM credentials c
        WHERE c.secret_hash = $1 AND c.revoked_at IS NULL`,
      [hash],
    )) as Row[];
    const principal = row && sameHash(row.secret_hash, hash) ? toPrincipal(row) : null;
    const credentialExpiresAt = row?.expires_at ? new Date(row.expires_at).getTime() : Infinity;
    if (generation === this.generation) {
      if (principal) remember(this.cache, key, { principal, expiresAt: now + PRINCIPAL_TTL_MS, credentialExpiresAt });
      else remember(this.unknown, key, now + PRINCIPAL_TTL_MS);
    }
    return principal && credentialExpiresAt > now ? principal : null;
  }

  /** Drops a revoked credential from the cache, here at once and in every other instance. */
  async forget(secretHash: Buffer): Promise<void> {
    const key = secretHash.toString('base64');
    this.invalidate(key);
    await this.broadcast(`credential:${key}`);
  }

  /** Drops one cached principal, or all of them (unknown tokens stay unknown: nothing makes one valid). */
  private invalidate(key?: string): void {
    this.generation++;
    if (key === undefined) this.cache.clear();
    else this.cache.delete(key);
  }

  private async broadcast(payload: string): Promise<void> {
    await this.db.query(`SELECT ${notifyCache('$1')}`, [payload]);
  }
}

/** Sets `key` last in `map`, first dropping the oldest entry when the map is full. */
function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  if (map.size >= MAX_CACHED_PRINCIPALS) map.delete(map.keys().next().value!);
  map.set(key, value);
}

function toPrincipal(row: Row): Principal {
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
