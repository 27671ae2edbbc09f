// Preloaded (node --import) into the conformance suite's process by scripts/conformance.mjs.
//
// The suite connects with no credentials and has no option to send a header, while /mcp
// requires a bearer. This adds `Authorization: Bearer $CONFORMANCE_BEARER` to every HTTP request
// the suite makes to $CONFORMANCE_TARGET (an origin), through undici's global dispatcher, which
// both the global fetch (the SDK client) and undici.request (the dns-rebinding scenario) use.
// The server under test is unchanged: its real credential guard checks the key.
import http from 'node:http';
import { createRequire } from 'node:module';

const bearer = process.env.CONFORMANCE_BEARER;
const target = process.env.CONFORMANCE_TARGET;
if (!bearer || !target) throw new Error('conformance-auth: set CONFORMANCE_BEARER and CONFORMANCE_TARGET');

// The suite's own undici (the same copy its `request` uses).
const suite = createRequire(import.meta.url).resolve(`${process.env.CONFORMANCE_SUITE ?? '@modelcontextprotocol/conformance'}/package.json`);
const { getGlobalDispatcher, setGlobalDispatcher } = createRequire(suite)('undici');

const value = `Bearer ${bearer}`;
const targetOrigin = new URL(target).origin;

function withAuthorization(headers) {
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) {
    // Either a flat [name, value, ...] list or a list of [name, value] pairs.
    const pairs = typeof headers[0] === 'string' ? headers.flatMap((h, i) => (i % 2 ? [] : [[h, headers[i + 1]]])) : headers;
    if (pairs.some(([name]) => String(name).toLowerCase() === 'authorization')) return headers;
    return typeof headers[0] === 'string' ? [...headers, 'authorization', value] : [...headers, ['authorization', value]];
  }
  if (typeof headers[Symbol.iterator] === 'function') return withAuthorization([...headers]);
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
  return { ...headers, authorization: value };
}

setGlobalDispatcher(
  getGlobalDispatcher().compose((dispatch) => (opts, handler) => {
    const origin = opts.origin === undefined ? undefined : new URL(String(opts.origin)).origin;
    return dispatch(origin === targetOrigin ? { ...opts, headers: withAuthorization(opts.headers) } : opts, handler);
  }),
);

// A few scenarios (2026-07-28 http-header-validation) send raw node:http requests, past undici: the
// same header for those to the target (the suite calls the module's `request` at call time).
const originalRequest = http.request;
http.request = function request(options, ...rest) {
  if (options && typeof options === 'object' && !(options instanceof URL) && `http://${options.hostname ?? options.host}:${options.port}` === targetOrigin) {
    options = { ...options, headers: withAuthorization(options.headers) };
  }
  return originalRequest.call(this, options, ...rest);
};
