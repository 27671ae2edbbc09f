import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request } from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { isPublicAddress } from './address-policy.js';

/** The limits of a metadata-document fetch (spec/oauth.md "Clients"). */
export const CIMD_TIMEOUT_MS = 5_000;
export const CIMD_MAX_BYTES = 5 * 1024;

export interface CimdFetchOptions {
  /** OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: lifts the address check (tests, a private deployment). */
  allowPrivateNetworks: boolean;
  /** Trusted CA certificates instead of the default ones (and NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer;
  timeoutMs?: number;
  maxBytes?: number;
}

/** The document as fetched: its JSON and the `Cache-Control` it came with. */
export interface FetchedDocument {
  body: unknown;
  cacheControl: string | undefined;
}

/** Why a document could not be fetched, in a sentence for the error page. */
export class CimdFetchError extends Error {
  override name = 'CimdFetchError';
}

/**
 * Resolves like `dns.lookup`, but refuses a name with any address that is not public (a name that
 * resolves to both is a DNS-rebinding attempt as much as a misconfiguration).
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || !addresses.length) {
      const error = Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not a public address`), { code: 'EADDRNOTPUBLIC' });
      return callback(error, '', 0);
    }
    if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  });
};

/**
 * Fetches a Client ID Metadata Document: https GET, a connection of its own (no agent: the address
 * checked is the one used), no redirect followed, the whole answer within `timeoutMs` (5 s) and at
 * most `maxBytes` (5 KiB), JSON. Unless private networks are allowed, the name must resolve to
 * public addresses only, and the address actually connected is checked again before a byte of the
 * request is sent (an IP-literal host is checked there).
 */
export function fetchClientMetadataDocument(url: string, options: CimdFetchOptions): Promise<FetchedDocument> {
  const timeoutMs = options.timeoutMs ?? CIMD_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? CIMD_MAX_BYTES;
  return new Promise<FetchedDocument>((resolve, reject) => {
    let settled = false;
    const finish = (err: CimdFetchError | null, document?: FetchedDocument) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      if (err) reject(err);
      else resolve(document!);
    };
    const fail = (message: string) => finish(new CimdFetchError(message));
    const timer = setTimeout(() => fail(`no complete answer within ${timeoutMs / 1000} s`), timeoutMs);

    const req = request(
      url,
      {
        method: 'GET',
        agent: false,
        headers: { Accept: 'application/json', 'User-Agent': 'reblog-mcp (OAuth client metadata)' },
        ...(options.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup }),
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          res.resume();
          return fail(status >= 300 && status < 400 ? `it answered ${status} (redirects are not followed)` : `it answered ${status}`);
        }
        if (Number(res.headers['content-length']) > maxBytes) return fail(`it is larger than ${maxBytes} bytes`);
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) return fail(`it is larger than ${maxBytes} bytes`);
          chunks.push(chunk);
        });
        res.on('error', (err) => fail(err.message));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return fail('it is not JSON');
          }
          const cacheControl = res.headers['cache-control'];
          finish(null, { body, cacheControl: Array.isArray(cacheControl) ? cacheControl.join(', ') : cacheControl });
        });
      },
    );
    req.on('socket', (socket: Socket) => {
      // Connected: the peer is known and no byte of the request has gone out (it waits for the TLS handshake).
      socket.once('connect', () => {
        const address = socket.remoteAddress ?? '';
        if (!options.allowPrivateNetworks && !isPublicAddress(address)) fail(`its server is at ${address}, which is not a public address`);
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => fail(err.code === 'EADDRNOTPUBLIC' ? err.message : `it could not be fetched (${err.message})`));
    req.end();
  });
}

/** How long a fetched document is used before it is fetched again: its `max-age`, kept between 5 minutes and 24 hours. */
export function documentFreshnessS(cacheControl: string | undefined): number {
  const MIN = 300;
  const MAX = 86_400;
  if (!cacheControl || /(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|$)/i.test(cacheControl)) return MIN;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(?:,|$)/i.exec(cacheControl);
  return maxAge ? Math.min(MAX, Math.max(MIN, Number(maxAge[1]))) : MIN;
}
