import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracer, tracingOn } from '../common/telemetry.js';
import { abortableSleep } from './abortable-delay.js';
import { ProviderError } from './ai.types.js';

/** Settings of an adapter for an OpenAI-compatible HTTP API; the timing knobs exist mostly for tests. */
export interface OpenAiProviderOptions {
  /** e.g. `https://api.openai.com/v1`; paths such as `chat/completions` are appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`, and nothing else is: never a caller's credential. */
  apiKey?: string;
  /** Omitted from requests when unset, for servers that have a default model. */
  model?: string;
  /** Limit of one attempt, body included. Default 120 s. */
  timeoutMs?: number;
  /** Attempts in all, the first included. Default 3. */
  maxAttempts?: number;
  /** First backoff delay, doubled at each retry, with jitter. Default 1 s. */
  baseDelayMs?: number;
  /** Cap of one backoff delay. Default 20 s. */
  maxDelayMs?: number;
  /** A longer `Retry-After` is not waited for: the call fails at once, telling when to come back. Default 60 s. */
  maxRetryAfterMs?: number;
}

/** One request's outcome; `status` is the HTTP status when the provider answered. */
type Attempt = { ok: true; json: unknown; status?: number } | { ok: false; error: ProviderError; retryAfterMs?: number; status?: number };

// Marks an attempt aborted by its own timer, as opposed to the caller's signal.
const TIMED_OUT = Symbol('timed out');

/**
 * POSTs JSON to an OpenAI-compatible API with a timeout per attempt, retries with exponential
 * backoff and jitter on 429, 5xx, timeouts and network errors (honouring `Retry-After`), and
 * cancellation through the caller's signal, which also cuts a backoff wait short.
 *
 * Hand-written rather than built on p-retry: p-retry is ESM-only, which Jest's CommonJS
 * transform here does not load without widening `transformIgnorePatterns`.
 */
export class OpenAiHttpClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxRetryAfterMs: number;

  /** `label` names the provider in error messages: "writer" or "image". */
  constructor(
    private readonly label: string,
    private readonly options: OpenAiProviderOptions,
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.baseDelayMs = options.baseDelayMs ?? 1_000;
    this.maxDelayMs = options.maxDelayMs ?? 20_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  }

  /** The parsed JSON answer; rejects with a {@link ProviderError}, or with the signal's reason when aborted. */
  async postJson(path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const url = `${this.baseUrl}/${path.replace(/^\/+/, '')}`;
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      const outcome = await this.attempt(url, JSON.stringify(body), signal);
      if (outcome.ok) return outcome.json;
      const { error, retryAfterMs } = outcome;
      if (!error.retryable) throw error;
      if (retryAfterMs !== undefined && retryAfterMs > this.maxRetryAfterMs) {
        throw new ProviderError(
          `The ${this.label} provider is overloaded and asks to wait ${Math.ceil(retryAfterMs / 1000)} s; call the tool again after that.`,
          true,
          { cause: error },
        );
      }
      if (attempt >= this.maxAttempts) {
        throw new ProviderError(
          `${error.message} It failed ${attempt} times in a row; wait a minute and call the tool again, and if it keeps failing tell the user the ${this.label} service is unavailable.`,
          true,
          { cause: error },
        );
      }
      await abortableSleep(retryAfterMs ?? this.backoffMs(attempt), signal);
    }
  }

  private backoffMs(attempt: number): number {
    const ceiling = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
    // Jitter spreads the retries of many workers hit by the same outage.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /**
   * One request, as a CLIENT span of the traced job or request it serves (HTTP semantic conventions:
   * method, server, URL without query, status; never the body or the key) while tracing is on. The
   * request then carries that span's W3C `traceparent` (and `tracestate`), so a provider that traces
   * continues the trace; with tracing off no header is added.
   */
  private attempt(url: string, body: string, signal: AbortSignal): Promise<Attempt> {
    if (!tracingOn() || !trace.getActiveSpan()) return this.send(url, body, signal);
    const target = new URL(url);
    const attributes = {
      'http.request.method': 'POST',
      'server.address': target.hostname,
      'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
      'url.full': `${target.origin}${target.pathname}`,
      'reblog.provider': this.label,
    };
    return tracer.startActiveSpan('POST', { kind: SpanKind.CLIENT, attributes }, (span) => {
      const traceHeaders: Record<string, string> = {};
      propagation.inject(context.active(), traceHeaders);
      return this.send(url, body, signal, traceHeaders).then(
        (outcome) => {
          if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
          if (!outcome.ok) {
            span.setAttribute('error.type', outcome.status !== undefined ? String(outcome.status) : 'provider_unreachable');
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
          return outcome;
        },
        (err: unknown) => {
          span.setAttribute('error.type', 'aborted');
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          throw err;
        },
      );
    });
  }

  /** One POST; `traceHeaders` (trace context, from {@link attempt}) go with it. */
  private async send(url: string, body: string, signal: AbortSignal, traceHeaders?: Record<string, string>): Promise<Attempt> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(TIMED_OUT), this.timeoutMs);
    const headers: Record<string, string> = { ...traceHeaders, 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    try {
      const res = await fetch(url, { method: 'POST', headers, body, signal: controller.signal });
      const text = await res.text();
      if (res.ok) {
        try {
          return { ok: true, json: JSON.parse(text), status: res.status };
        } catch {
          return {
            ok: false,
            error: new ProviderError(
              `The ${this.label} provider answered with malformed JSON; call the tool again, and if it keeps happening tell the user the ${this.label} provider is misbehaving.`,
              false,
            ),
            status: res.status,
          };
        }
      }
      return { ok: false, error: this.statusError(res.status, text), retryAfterMs: retryAfterMs(res.headers), status: res.status };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (controller.signal.reason === TIMED_OUT) {
        return { ok: false, error: new ProviderError(`The ${this.label} provider did not answer within ${Math.round(this.timeoutMs / 100) / 10} s.`, true) };
      }
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (err as Error).message;
      return { ok: false, error: new ProviderError(`Could not reach the ${this.label} provider (${reason}).`, true, { cause: err }) };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private statusError(status: number, text: string): ProviderError {
    if (status === 429) return new ProviderError(`The ${this.label} provider is rate limiting this server (HTTP 429).`, true);
    if (status >= 500) return new ProviderError(`The ${this.label} provider failed with HTTP ${status}.`, true);
    const detail = providerMessage(text);
    const said = detail ? `: "${detail}"` : '';
    if (status === 401 || status === 403) {
      return new ProviderError(
        `The ${this.label} provider refused this server's credentials (HTTP ${status}${said}); this is a server configuration problem, so tell the user to ask the operator to check the ${this.label} API key.`,
        false,
      );
    }
    return new ProviderError(
      `The ${this.label} provider rejected the request (HTTP ${status}${said}); rephrase or shorten the request and try again, and if it keeps failing tell the user the ${this.label} provider is misconfigured.`,
      false,
    );
  }
}

/** `retry-after-ms` (sent by OpenAI) or `Retry-After` in seconds or as an HTTP date, in milliseconds. */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The provider's own error message, shortened to one line: `{"error": {"message"}}` or the raw text. */
function providerMessage(text: string): string {
  let message = text;
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const candidate = typeof json.error === 'string' ? json.error : (json.error?.message ?? json.message);
    if (typeof candidate === 'string') message = candidate;
  } catch {
    // Not JSON: keep the raw text.
  }
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
