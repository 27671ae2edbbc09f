import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { ClientRequest } from 'node:http';
import { request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './address-policy.js';

/** The limits of a metadata-document fetch (README.md#client-metadata-documents). */
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

/** Why a document could not be fetched, in words for the log (the client is told only that it could not be). */
export class CimdFetchError extends Error {
  override name = 'CimdFetchError';
}

/** The addresses a host was checked at; the connection may go to these only. */
type CheckedAddresses = { address: string; family: number }[];

/**
 * Resolves `hostname` (a URL's host: a name, or an IP literal in brackets or not) once and, unless
 * private networks are allowed, refuses it when any of its addresses is not public (a name that
 * resolves to both is a DNS-rebinding attempt as much as a misconfiguration). Nothing is dialled here.
 */
async function checkedAddresses(hostname: string, allowPrivateNetworks: boolean): Promise<CheckedAddresses> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family) {
    if (!allowPrivateNetworks && !isPublicAddress(bare)) throw new CimdFetchError(`${bare} is not a public address`);
    return [{ address: bare, family }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookup(bare, { all: true });
  } catch (err) {
    throw new CimdFetchError(`${bare} could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!addresses.length) throw new CimdFetchError(`${bare} resolves to no address`);
  const refused = allowPrivateNetworks ? undefined : addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new CimdFetchError(`${bare} resolves to ${refused.address}, which is not a public address`);
  return addresses;
}

/** A `lookup` for the connection that answers the checked addresses and never asks DNS a second time. */
function pinnedLookup(addresses: CheckedAddresses): LookupFunction {
  return (hostname, options, callback) => {
    const fitting = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
    if (!fitting.length) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
    if (options.all) (callback as unknown as (e: null, a: CheckedAddresses) => void)(null, fitting);
    else callback(null, fitting[0].address, fitting[0].family);
  };
}

/**
 * Fetches a Client ID Metadata Document: https GET, a connection of its own (no agent), no redirect
 * followed, the whole answer (name resolution included) within `timeoutMs` (5 s) and at most
 * `maxBytes` (5 KiB), JSON. The host is resolved first and, unless private networks are allowed,
 * every address it has must be public: only then is a socket opened, to the addresses checked
 * (an IP-literal host is checked as it is, and dialled as it is).
 */
export function fetchClientMetadataDocument(url: string, options: CimdFetchOptions): Promise<FetchedDocument> {
  const timeoutMs = options.timeoutMs ?? CIMD_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? CIMD_MAX_BYTES;
  return new Promise<FetchedDocument>((resolve, reject) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (err: CimdFetchError | null, document?: FetchedDocument) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      if (err) reject(err);
      else resolve(document!);
    };
    const fail = (message: string) => finish(new CimdFetchError(message));
    const timer = setTimeout(() => fail(`no complete answer within ${timeoutMs / 1000} s`), timeoutMs);

    const send = (addresses: CheckedAddresses) => {
      if (settled) return;
      req = request(
        url,
        {
          method: 'GET',
          agent: false,
          headers: { Accept: 'application/json', 'User-Agent': 'reblog-mcp (OAuth client metadata)' },
          lookup: pinnedLookup(addresses),
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
      req.on('error', (err: NodeJS.ErrnoException) => fail(`it could not be fetched (${err.message})`));
      req.end();
    };
    checkedAddresses(new URL(url).hostname, options.allowPrivateNetworks).then(send, (err: CimdFetchError) => finish(err));
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
