import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkedAddresses, isLoopbackHttp, pinnedLookup, SafeFetchError } from './safe-fetch.js';

/** The most an answer may weigh (a token response, a userinfo document). */
const MAX_BYTES = 256 * 1024;
/** Statuses whose answer has no body (the Fetch API refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** What a request carries: the shape openid-client's `customFetch` is called with. */
export interface CheckedRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

/**
 * A `fetch` for requests to servers another party named, as openid-client's `customFetch` (an
 * account's identity provider: its token and userinfo endpoints, taken from the discovery document
 * its owner's issuer serves). The address rules of the documents' fetch (safe-fetch.ts): the host is
 * resolved once and, unless private networks are allowed, every address must be public; the
 * connection goes to those addresses only; plain http only to loopback, and only when private
 * networks are allowed. No redirect is followed, and an answer over 256 KiB is refused.
 */
export function checkedFetch(options: { allowPrivateNetworks: boolean }): (url: string, init: CheckedRequest) => Promise<Response> {
  return async (url, init) => {
    const target = new URL(url);
    const plain = target.protocol === 'http:';
    if (target.protocol !== 'https:' && !(plain && options.allowPrivateNetworks && isLoopbackHttp(target))) {
      throw new SafeFetchError(`${target.origin} is not an https URL`);
    }
    const addresses = await checkedAddresses(target.hostname, options.allowPrivateNetworks);
    const body = bodyOf(init.body);
    return new Promise<Response>((resolve, reject) => {
      const req = (plain ? httpRequest : httpsRequest)(
        target,
        { method: init.method ?? 'GET', headers: init.headers, agent: false, lookup: pinnedLookup(addresses), signal: init.signal },
        (res) => void collect(res).then(resolve, reject),
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}

function bodyOf(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (body instanceof URLSearchParams) return body.toString();
  if (typeof body === 'string') return body;
  throw new SafeFetchError('the request body is neither a form nor text');
}

/** The whole answer as a Fetch API Response, or the reason it is refused. */
function collect(res: IncomingMessage): Promise<Response> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BYTES) {
        res.destroy();
        reject(new SafeFetchError(`the answer is larger than ${MAX_BYTES} bytes`));
      } else chunks.push(chunk);
    });
    res.on('error', reject);
    res.on('end', () => {
      const headers = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      const status = res.statusCode ?? 0;
      try {
        resolve(new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers }));
      } catch {
        reject(new SafeFetchError(`it answered the status ${status}`));
      }
    });
  });
}
