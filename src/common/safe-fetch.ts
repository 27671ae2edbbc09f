import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { ClientRequest } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './address-policy.js';

/**
 * The limits of a fetch of a document another server publishes (a Client ID Metadata Document, an
 * identity provider's discovery document or keys; README.md#client-metadata-documents).
 */
export const CIMD_TIMEOUT_MS = 5_000;
export const CIMD_MAX_BYTES = 5 * 1024;

export interface SafeFetchOptions {
  /** OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: lifts the address check (tests, a private deployment). */
  allowPrivateNetworks: boolean;
  /** Trusted CA certificates instead of the default ones (and NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer;
  timeoutMs?: number;
  maxBytes?: number;
  /** What the request says it is for, in its User-Agent. */
  purpose?: string;
}

/** Whether `url` is plain http to this machine by name or address (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHttp(url: URL): boolean {
  if (url.protocol !== 'http:') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The document as fetched: its JSON and the `Cache-Control` it came with. */
export interface FetchedDocument {
  body: unknown;
  cacheControl: string | undefined;
}

/** Why a document could not be fetched, in words for the log (the client is told only that it could not be). */
export class SafeFetchError extends Error {
  override name = 'SafeFetchError';
}

/** The addresses a host was checked at; the connection may go to these only. */
export type CheckedAddresses = { address: string; family: number }[];

/**
 * Resolves `hostname` (a URL's host: a name, or an IP literal in brackets or not) once and, unless
 * private networks are allowed, refuses it when any of its addresses is not public (a name that
 * resolves to both is a DNS-rebinding attempt as much as a misconfiguration). Nothing is dialled here.
 */
export async function checkedAddresses(hostname: string, allowPrivateNetworks: boolean): Promise<CheckedAddresses> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family) {
    if (!allowPrivateNetworks && !isPublicAddress(bare)) throw new SafeFetchError(`${bare} is not a public address`);
    return [{ address: bare, family }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookup(bare, { all: true });
  } catch (err) {
    throw new SafeFetchError(`${bare} could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!addresses.length) throw new SafeFetchError(`${bare} resolves to no address`);
  const refused = allowPrivateNetworks ? undefined : addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new SafeFetchError(`${bare} resolves to ${refused.address}, which is not a public address`);
  return addresses;
}

/** A `lookup` for the connection that answers the checked addresses and never asks DNS a second time. */
export function pinnedLookup(addresses: CheckedAddresses): LookupFunction {
  return (hostname, options, callback) => {
    const fitting = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
    if (!fitting.length) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
    if (options.all) (callback as unknown as (e: null, a: CheckedAddresses) => void)(null, fitting);
    else callback(null, fitting[0].address, fitting[0].family);
  };
}

/** Fetches a Client ID Metadata Document ({@link safeFetchJson}). */
export function fetchClientMetadataDocument(url: string, options: SafeFetchOptions): Promise<FetchedDocument> {
  return safeFetchJson(url, { purpose: 'OAuth client metadata', ...options });
}

/**
 * Fetches a JSON document another server publishes: https GET, a connection of its own (no agent),
 * no redirect followed, the whole answer (name resolution included) within `timeoutMs` (5 s) and at
 * most `maxBytes` (5 KiB), JSON. The host is resolved first and, unless private networks are
 * allowed, every address it has must be public: only then is a socket opened, to the addresses
 * checked (an IP-literal host is checked as it is, and dialled as it is). Plain http is refused,
 * except to a loopback host when private networks are allowed (tests, a private deployment).
 */
export function safeFetchJson(url: string, options: SafeFetchOptions): Promise<FetchedDocument> {
  const timeoutMs = options.timeoutMs ?? CIMD_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? CIMD_MAX_BYTES;
  return new Promise<FetchedDocument>((resolve, reject) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (err: SafeFetchError | null, document?: FetchedDocument) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      if (err) reject(err);
      else resolve(document!);
    };
    const fail = (message: string) => finish(new SafeFetchError(message));
    const timer = setTimeout(() => fail(`no complete answer within ${timeoutMs / 1000} s`), timeoutMs);

    const parsed = new URL(url);
    const plain = parsed.protocol === 'http:';
    if (parsed.protocol !== 'https:' && !(plain && options.allowPrivateNetworks && isLoopbackHttp(parsed))) {
      return fail('it is not an https URL');
    }
    const send = (addresses: CheckedAddresses) => {
      if (settled) return;
      req = (plain ? httpRequest : request)(
        url,
        {
          method: 'GET',
          agent: false,
          headers: { Accept: 'application/json', 'User-Agent': `reblog-mcp (${options.purpose ?? 'OAuth client metadata'})` },
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
    checkedAddresses(parsed.hostname, options.allowPrivateNetworks).then(send, (err: SafeFetchError) => finish(err));
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
