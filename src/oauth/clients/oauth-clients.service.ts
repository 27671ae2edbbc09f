import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { PrincipalResolver } from '../../auth/principal.resolver.js';
import { hashSecret } from '../../auth/secrets.js';
import { DomainError } from '../../common/domain-error.js';
import type { Page } from '../../common/pagination.js';
import type { Queryable } from '../../database/sql.js';
import { OAuthError } from '../oauth-error.js';
import { GrantsRepository } from '../tokens/grants.repository.js';
import { checkClientMetadata } from './client-metadata.js';
import type { ClientSource, OAuthClient } from './oauth-client.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';

/** A client in the admin list (spec/oauth.md, `GET /admin/v1/oauth-clients`). */
export interface OAuthClientView {
  id: string;
  client_name: string | null;
  redirect_uris: string[];
  source: ClientSource;
  created_at: Date;
  last_used_at: Date | null;
}

/** The largest registration body accepted (spec/oauth.md "Clients"); the server-wide JSON limit is 1 MiB. */
export const MAX_REGISTRATION_BYTES = 16 * 1024;
export const CLIENT_SECRET_PREFIX = 'rbcs_';

/** A `client_id` that names no client this server knows or can fetch; the message says why. */
export class UnknownClientError extends Error {
  override name = 'UnknownClientError';
}

/** A registration request as the controller read it. */
export interface RegistrationRequest {
  body: unknown;
  /** The body's size in bytes, as sent. */
  size: number;
  /** Whether it was sent as JSON. */
  json: boolean;
}

/** OAuth clients: registered ones (RFC 7591) and those described by a Client ID Metadata Document. */
@Injectable()
export class OAuthClientsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly clients: OAuthClientsRepository,
    private readonly grants: GrantsRepository,
    private readonly resolver: PrincipalResolver,
  ) {}

  /**
   * Registers a client (RFC 7591): its metadata checked, a `client_secret` for a confidential one
   * answered once and kept as a hash. Answers the body of the `201`.
   */
  async register(request: RegistrationRequest): Promise<Record<string, unknown>> {
    if (request.size > MAX_REGISTRATION_BYTES) throw new OAuthError('invalid_request', `The registration body is ${request.size} bytes; at most ${MAX_REGISTRATION_BYTES} are accepted.`, 413);
    if (!request.json) throw new OAuthError('invalid_request', 'Send the client metadata as JSON (Content-Type: application/json), as RFC 7591 says.');
    const metadata = checkClientMetadata(request.body);
    const secret = metadata.token_endpoint_auth_method === 'none' ? undefined : CLIENT_SECRET_PREFIX + randomBytes(32).toString('base64url');
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
    const client = clientId ? await this.clients.find(clientId) : null;
    if (!client) throw new UnknownClientError(`No client is registered with client_id "${clientId}".`);
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
      const revoked = await this.grants.revokeClientGrants(clientId, tx);
      return (await this.clients.delete(clientId, tx)) || revoked.length > 0;
    });
    if (!found) throw DomainError.notFound('OAuth client', clientId);
    await this.resolver.forget();
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

