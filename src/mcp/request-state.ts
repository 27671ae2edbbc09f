import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { RpcError } from '../protocol/json-rpc.js';

/**
 * `requestState` of an `input_required` result (MCP 2026-07-28, SEP-2322): what the server needs to
 * carry from one round of a request to its retry, held by the client, so that the retry can reach any
 * instance. It is `base64url(JSON payload) + "." + base64url(HMAC-SHA256(secret, payload part))`, signed
 * with REQUEST_STATE_SECRET (the same on every instance), and bound to the credential, the method, the
 * tool/prompt name or resource uri, and the request's arguments, with an expiry. A state that fails any of
 * these checks is a -32602 error, never a new question: a tampered state must not turn into a prompt.
 */

/** What a state is bound to: the request it was issued for. */
export interface StateBinding {
  /** The credential (API key or OAuth grant) that called. */
  credentialId: string;
  /** `tools/call`, `prompts/get` or `resources/read`. */
  method: string;
  /** The tool or prompt name, or the resource uri. */
  name: string;
  /** The request's arguments (tools/call, prompts/get), digested: a retry with other arguments is refused. */
  args?: unknown;
}

/** How long a state may be echoed back, seconds. */
export const STATE_TTL_S = 600;
/** The longest state accepted (the answers it carries are bounded well below this). */
export const MAX_STATE_LENGTH = 65_536;
const VERSION = 1;

interface Payload {
  v: number;
  cred: string;
  m: string;
  n: string;
  a: string;
  d: unknown;
  exp: number;
}

/** A -32602 for a state that cannot be used, saying why (nothing secret in it). */
function refused(why: string): RpcError {
  return RpcError.invalidParams(`requestState failed verification: ${why}. Send the request again without requestState and inputResponses to start over.`);
}

/** JSON with object keys sorted, so the same arguments in another key order digest the same. */
function stable(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
}

/** The digest of a request's arguments a state is bound to (absent and `{}` are the same request). */
export function argumentsDigest(args: unknown): string {
  return createHash('sha256')
    .update(stable(args ?? {}))
    .digest('base64url');
}

function mac(secret: Buffer, payloadPart: string): string {
  return createHmac('sha256', secret).update(payloadPart).digest('base64url');
}

/** Signs `data` for the retry of the request `binding` names; valid for {@link STATE_TTL_S} from `now`. */
export function signState(secret: Buffer, binding: StateBinding, data: unknown, now = Date.now()): string {
  const payload: Payload = {
    v: VERSION,
    cred: binding.credentialId,
    m: binding.method,
    n: binding.name,
    a: argumentsDigest(binding.args),
    d: data,
    exp: Math.floor(now / 1000) + STATE_TTL_S,
  };
  const part = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${part}.${mac(secret, part)}`;
}

/**
 * The data of a state the client echoed, once it is proven ours, unexpired, and issued for this very
 * request (credential, method, name, arguments). Anything else is a -32602 {@link RpcError}.
 */
export function verifyState(secret: Buffer, state: unknown, binding: StateBinding, now = Date.now()): unknown {
  if (typeof state !== 'string') throw RpcError.invalidParams('requestState failed verification: it must be the string the previous answer gave, unchanged.');
  if (state.length === 0 || state.length > MAX_STATE_LENGTH) throw refused('not a state this server issued');
  const dot = state.lastIndexOf('.');
  if (dot <= 0) throw refused('not a state this server issued');
  const part = state.slice(0, dot);
  // Compare the canonical encoding of the MAC, as strings of equal length, in constant time: a
  // lenient decoder would take "…MAC-TAMPERED" for the MAC.
  const expected = Buffer.from(mac(secret, part));
  const given = Buffer.from(state.slice(dot + 1));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused('its signature does not match');
  let payload: Payload;
  try {
    payload = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Payload;
  } catch {
    throw refused('not a state this server issued');
  }
  if (payload === null || typeof payload !== 'object' || payload.v !== VERSION) throw refused('not a state this server issued');
  if (payload.cred !== binding.credentialId) throw refused('it was issued to another credential');
  if (payload.m !== binding.method || payload.n !== binding.name)
    throw refused(`it was issued for another request (${String(payload.m)} ${String(payload.n)})`);
  if (payload.a !== argumentsDigest(binding.args)) throw refused('it was issued for other arguments; repeat the request with the same arguments');
  if (typeof payload.exp !== 'number' || payload.exp * 1000 <= now) throw refused('it has expired');
  return payload.d;
}
