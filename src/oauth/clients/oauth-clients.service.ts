import { AuditService } from '../../audit/audit.service.js';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { CredentialsService } from '../../auth/credentials.service.js';
import { hashSecret } from '../../auth/secrets.js';
import { DomainError } from '../../common/domain-error.js';
import type { Page } from '../../common/pagination.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import type { Queryable } from '../../database/sql.js';
import { OAuthError } from '../oauth-error.js';
import { SafeFetchError, documentFreshnessS, fetchClientMetadataDocument } from '../../common/safe-fetch.js';
import { checkClientMetadata, type ClientMetadata } from './client-metadata.js';
import type { ClientSource, OAuthClient } from './oauth-client.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';

/** A client in the admin list (`GET /admin/v1/oauth-clients`, docs/admin-api.md#oauth-clients). */
export interface OAuthClientView {
  id: string;
  client_name: string | null;
  redirect_uris: string[];
  source: ClientSource;
  created_at: Date;
  last_used_at: Date | null;
}

/** The largest registration body accepted (docs/oauth.md#dynamic-registration); the server-wide JSON limit is 1 MiB. */
export const MAX_REGISTRATION_BYTES = 16 * 1024;
export const CLIENT_SECRET_PREFIX = 'rbcs_';
/** A document whose refetch fails is used this long after it was last fetched. */
export const CIMD_STALE_MS = 7 * 86_400_000;

/** How long a client is told to wait when too many documents are being fetched: one fetch's time limit. */
export const CIMD_BUSY_RETRY_S = 5;
const WARN_EVERY_MS = 60_000;

/** A `client_id` that names no client this server knows or can fetch; the message says why. */
export class UnknownClientError extends Error {
  override name = 'UnknownClientError';
}

/** A fetched document that cannot describe its client: the message finishes "its client metadata document …". */
class DocumentError extends Error {
  override name = 'DocumentError';
}

/** A registration request as the controller read it. */
export interface RegistrationRequest {
  body: unknown;
  /** The body's size in bytes, as sent. */
  size: number;
  /** Whether it was sent as JSON. */
  json: boolean;
}

/**
 * OAuth clients: registered ones (RFC 7591) and those described by a Client ID Metadata Document
 * (a `client_id` that is an https URL with a path), fetched and cached as `cimd` rows.
 */
@Injectable()
export class OAuthClientsService {
  private readonly log = new Logger(OAuthClientsService.name);
  /** Fetches under way, by URL: requests arriving meanwhile share one. */
  private readonly fetching = new Map<string, Promise<OAuthClient>>();
  /** When a failure was last logged, by host. */
  private readonly warned = new Map<string, number>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly clients: OAuthClientsRepository,
    private readonly credentials: CredentialsService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Registers a client (RFC 7591): its metadata checked, a `client_secret` for a confidential one
   * answered once and kept as a hash. Answers the body of the `201`.
   */
  async register(request: RegistrationRequest): Promise<Record<string, unknown>> {
    if (request.size > MAX_REGISTRATION_BYTES)
      throw new OAuthError('invalid_request', `The registration body is ${request.size} bytes; at most ${MAX_REGISTRATION_BYTES} are accepted.`, 413);
    if (!request.json) throw new OAuthError('invalid_request', 'Send the client metadata as JSON (Content-Type: application/json), as RFC 7591 says.');
    const metadata = checkClientMetadata(request.body);
    // A public client has no secret, nor does one that signs its own assertions.
    const secretless = metadata.token_endpoint_auth_method === 'none' || metadata.token_endpoint_auth_method === 'private_key_jwt';
    const secret = secretless ? undefined : CLIENT_SECRET_PREFIX + randomBytes(32).toString('base64url');
    const client = await this.clients.insert({
      id: randomBytes(18).toString('base64url'),
      client_name: metadata.client_name ?? null,
      redirect_uris: metadata.redirect_uris,
      token_endpoint_auth_method: metadata.token_endpoint_auth_method,
      secret_hash: secret ? hashSecret(secret) : null,
      metadata: { ...metadata },
    });
    return {
      client_id: client.id,
      client_id_issued_at: Math.floor(new Date(client.created_at).getTime() / 1000),
      // RFC 7591 §3.2.1: 0 is a secret that does not expire.
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      ...metadata,
    };
  }

  /** The client a `client_id` names; {@link UnknownClientError} (saying why) when it names none. */
  async resolve(clientId: string): Promise<OAuthClient> {
    if (/^https:\/\//i.test(clientId)) return this.resolveDocument(clientId);
    const client = clientId ? await this.clients.find(clientId) : null;
    if (!client || client.source !== 'dcr') throw new UnknownClientError(`No client is registered with client_id "${clientId}".`);
    return client;
  }

  /**
   * A metadata-document client: the stored copy while it is fresh (its Cache-Control, 5 min to 24 h),
   * else fetched again; when that fails, the stored copy for up to 7 days after its last fetch. A
   * fetch that fails is told in one sentence whatever the cause (the cause goes to the log, once a
   * minute per host), so the answer says nothing about the network the server sees. A document that
   * was fetched but cannot describe its client is told why. At most OAUTH_CIMD_MAX_CONCURRENT_FETCHES
   * fetches run at once; past that, a 503.
   */
  private async resolveDocument(url: string): Promise<OAuthClient> {
    if (!this.config.oauth.clientMetadataDocuments) {
      throw new UnknownClientError(
        `The client_id "${url}" is a client metadata document URL, and this server does not accept those; the client can register itself instead (dynamic client registration).`,
      );
    }
    const problem = documentUrlProblem(url);
    if (problem) throw new UnknownClientError(`The client_id "${url}" is not a usable metadata document URL: ${problem}.`);
    const stored = await this.clients.find(url);
    if (stored && stored.source === 'cimd' && stored.document_fresh_until && new Date(stored.document_fresh_until).getTime() > Date.now()) return stored;
    const fetchedAt = stored?.source === 'cimd' && stored.document_fetched_at ? new Date(stored.document_fetched_at).getTime() : 0;
    const stale = fetchedAt > Date.now() - CIMD_STALE_MS ? stored : null;
    let pending = this.fetching.get(url);
    if (!pending) {
      if (this.fetching.size >= this.config.oauth.cimdMaxConcurrentFetches) {
        if (stale) return stale;
        throw new OAuthError(
          'temporarily_unavailable',
          `Too many client metadata documents are being fetched right now; retry after ${CIMD_BUSY_RETRY_S} s.`,
          503,
          { 'Retry-After': String(CIMD_BUSY_RETRY_S) },
        );
      }
      pending = this.fetchDocument(url).finally(() => this.fetching.delete(url));
      this.fetching.set(url, pending);
    }
    try {
      return await pending;
    } catch (err) {
      if (!(err instanceof SafeFetchError || err instanceof DocumentError)) throw err;
      this.warnOnce(url, err, stale !== null);
      if (stale) return stale;
      if (err instanceof DocumentError) throw new UnknownClientError(`The client_id "${url}" cannot be used: its client metadata document ${err.message}.`);
      throw new UnknownClientError(`The client_id "${url}" cannot be used: its client metadata document could not be fetched.`);
    }
  }

  /** Logs why a document could not be used, at most once a minute per host (a flood of ids on one host is one line a minute). */
  private warnOnce(url: string, err: SafeFetchError | DocumentError, usingStored: boolean): void {
    const host = new URL(url).host;
    const now = Date.now();
    if ((this.warned.get(host) ?? -Infinity) > now - WARN_EVERY_MS) return;
    if (this.warned.size >= 1_000) for (const [h, at] of this.warned) if (at <= now - WARN_EVERY_MS) this.warned.delete(h);
    this.warned.set(host, now);
    const reason = err instanceof DocumentError ? `the document ${err.message}` : err.message;
    this.log.warn(
      `The client metadata document of a client on ${host} could not be used (${url}): ${reason}${usingStored ? '; its stored copy is used' : ''}.`,
    );
  }

  private async fetchDocument(url: string): Promise<OAuthClient> {
    const { body, cacheControl } = await fetchClientMetadataDocument(url, { allowPrivateNetworks: this.config.oauth.cimdAllowPrivateNetworks });
    const metadata = checkDocument(body, url);
    const client = await this.clients.upsertDocument({
      id: url,
      client_name: metadata.client_name ?? null,
      redirect_uris: metadata.redirect_uris,
      metadata: { ...metadata },
      freshS: documentFreshnessS(cacheControl),
    });
    if (!client) throw new DocumentError('has the id of a registered client');
    return client;
  }

  /** The stored client, as it was when the person was asked (no document is fetched again); null when deleted since. */
  get(clientId: string): Promise<OAuthClient | null> {
    return this.clients.find(clientId);
  }

  /** Marks the client used (a grant was made or refreshed): a client with a grant is never purged. */
  touch(clientId: string, db?: Queryable): Promise<void> {
    return this.clients.touch(clientId, db);
  }

  /** Every client, newest first, paged like every admin list (the cursor is opaque: creation time and id). */
  async list(limit = 50, cursor?: string): Promise<Page<OAuthClientView>> {
    const found = await this.clients.page(limit + 1, decodeClientCursor(cursor));
    const more = found.length > limit;
    const items = more ? found.slice(0, limit) : found;
    const last = items[items.length - 1];
    return {
      items: items.map(({ created_key: _key, ...view }) => view),
      next_cursor: more ? Buffer.from(JSON.stringify([last.created_key, last.id]), 'utf8').toString('base64url') : null,
    };
  }

  /** Deletes a client and revokes every grant it has (`client_deleted`), in every instance at once. */
  async remove(clientId: string): Promise<void> {
    const found = await this.db.transaction(async (tx) => {
      const revoked = await this.credentials.revokeClientGrants(clientId, tx);
      const found = (await this.clients.delete(clientId, tx)) || revoked.length > 0;
      if (!found) return false;
      // One event in each account whose grants went with the client (the operator's trail shows them all), or one in none.
      const accounts = [...new Set(revoked.map((g) => g.account_id))];
      for (const accountId of accounts.length ? accounts : [null]) {
        const grants = revoked.filter((g) => g.account_id === accountId).map((g) => g.id);
        await this.audit.record(tx, {
          action: 'oauth_client.deleted',
          accountId,
          target: { client_id: clientId },
          change: { after: { revoked_grants: grants } },
        });
      }
      return true;
    });
    if (!found) throw DomainError.notFound('OAuth client', clientId);
    await this.credentials.settled();
  }

  /** Deletes up to `limit` clients that never got a grant within a day of appearing; answers how many. */
  purgeUnused(limit: number): Promise<number> {
    return this.clients.purgeUnused(limit);
  }
}

/** A timestamptz as Postgres writes it (`2026-01-02 03:04:05.123456+00`). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

/** The (created_at, id) position an admin-list cursor names; a cursor this API did not make is a 400. */
function decodeClientCursor(cursor: string | undefined): { createdAt: string; id: string } | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string' && TIMESTAMP.test(createdAt)) return { createdAt, id };
  } catch {
    // Reported below.
  }
  throw new DomainError('validation_failed', 'The cursor is not one this API returned; start again without it.');
}

/** Why a `client_id` URL cannot name a metadata document (the draft's rules), or null. */
function documentUrlProblem(url: string): string | null {
  if (!URL.canParse(url)) return 'it is not a URL';
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:') return 'it must be https';
  if (parsed.pathname === '/') return 'it must have a path';
  if (url.includes('#')) return 'it may not have a fragment';
  if (parsed.username || parsed.password) return 'it may not carry a user name or password';
  // Dot segments, a host in capitals, a default port: the id must be the URL exactly as it is fetched.
  if (parsed.href !== url) return `it is not in its normal form (${parsed.href})`;
  return null;
}

/** A fetched document as a client: its own URL as client_id, no secret (auth method none), valid metadata. */
function checkDocument(body: unknown, url: string): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DocumentError('is not a JSON object');
  const document = body as Record<string, unknown>;
  if (document.client_id !== url) throw new DocumentError(`names client_id ${JSON.stringify(document.client_id)}, which is not its own URL`);
  const method = document.token_endpoint_auth_method;
  if (method !== undefined && method !== null && method !== 'none')
    throw new DocumentError(`has token_endpoint_auth_method ${JSON.stringify(method)}; only none is accepted`);
  if ('client_secret' in document) throw new DocumentError('carries a client_secret');
  try {
    return checkClientMetadata(document);
  } catch (err) {
    throw new DocumentError(`is not valid client metadata: ${err instanceof OAuthError ? err.message.replace(/\.$/, '') : String(err)}`);
  }
}
