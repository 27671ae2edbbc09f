import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { ProviderError, type WriteRequest } from './ai.types.js';
import type { OpenAiProviderOptions } from './openai-http.client.js';
import { OpenAiImageProvider } from './openai-image.provider.js';
import { OpenAiWriterProvider } from './openai-writer.provider.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  at: number;
}

type Handler = (res: ServerResponse, seen: Seen, index: number) => void;

/** A fake OpenAI-compatible server on loopback; each test sets the handler. */
let server: Server;
let baseUrl: string;
let handler: Handler;
let seen: Seen[];
const timers = new Set<NodeJS.Timeout>();

function later(ms: number, fn: () => void): void {
  const timer = setTimeout(() => {
    timers.delete(timer);
    fn();
  }, ms);
  timers.add(timer);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function completion(content: unknown) {
  return { id: 'c1', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }] };
}

const article = {
  title: 'Cold brew at home',
  excerpt: 'Why and how.',
  body: '# Cold brew at home\n\nIntro.\n\n## Gear\n\nA jar.',
  tags: ['Coffee', 'cold brew', 'coffee'],
};
const request: WriteRequest = { brief: 'Cold brew at home', length: 'short', config: { audience: 'beginners', banned_words: 'cheap', language: 'en' } };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
        at: Date.now(),
      };
      seen.push(entry);
      handler(res, entry, seen.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

beforeEach(() => {
  seen = [];
  handler = (res) => json(res, 500, { error: { message: 'no handler' } });
});

afterEach(() => {
  for (const timer of timers) clearTimeout(timer);
  timers.clear();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// Fast retries for tests; each test overrides what it exercises.
const options = (extra: Partial<OpenAiProviderOptions> = {}): OpenAiProviderOptions => ({
  baseUrl,
  apiKey: 'sk-provider',
  model: 'test-model',
  timeoutMs: 2_000,
  baseDelayMs: 5,
  ...extra,
});
const never = () => new AbortController().signal;
const noProgress = () => undefined;

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('OpenAiWriterProvider against a fake server', () => {
  it('asks chat completions for a JSON article and reads it defensively', async () => {
    handler = (res) => json(res, 200, completion('```json\n' + JSON.stringify(article) + '\n```'));
    const progress: number[] = [];
    const draft = await new OpenAiWriterProvider(options()).write(request, never(), (f) => progress.push(f));

    expect(draft).toEqual({ title: 'Cold brew at home', excerpt: 'Why and how.', body: 'Intro.\n\n## Gear\n\nA jar.\n', tags: ['coffee', 'cold brew'] });
    expect(progress).toEqual([1]);
    expect(seen).toHaveLength(1);
    const [call] = seen;
    expect([call.method, call.url]).toEqual(['POST', '/v1/chat/completions']);
    expect(call.body).toMatchObject({ model: 'test-model', response_format: { type: 'json_object' } });
    const messages = call.body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0].content).toContain('Never use these words: cheap.');
    expect(messages[1].content).toContain('Cold brew at home');
  });

  it('sends the provider key as the only credential, and none when it has none', async () => {
    handler = (res) => json(res, 200, completion(JSON.stringify(article)));
    await new OpenAiWriterProvider(options()).write(request, never(), noProgress);
    await new OpenAiWriterProvider(options({ apiKey: undefined, model: undefined })).write(request, never(), noProgress);

    expect(seen[0].headers.authorization).toBe('Bearer sk-provider');
    expect(seen[1].headers.authorization).toBeUndefined();
    expect(seen[1].body).not.toHaveProperty('model');
    for (const { headers } of seen) {
      expect(Object.keys(headers).filter((h) => /cookie|token|api-key|^x-/i.test(h))).toEqual([]);
    }
  });

  it('gives up on a slow answer after the per-attempt timeout, retrying once per attempt', async () => {
    handler = (res) => later(3_000, () => json(res, 200, completion(JSON.stringify(article))));
    const started = Date.now();
    const error = await failure(new OpenAiWriterProvider(options({ timeoutMs: 150, maxAttempts: 2 })).write(request, never(), noProgress));

    expect(Date.now() - started).toBeLessThan(1_500);
    expect(seen).toHaveLength(2);
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^The writer provider did not answer within 0\.2 s\. It failed 2 times in a row; wait a minute and call the tool again/);
  });

  it('retries after a 429, waiting as long as Retry-After says', async () => {
    handler = (res, _, i) =>
      i === 0 ? json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '1' }) : json(res, 200, completion(JSON.stringify(article)));
    const draft = await new OpenAiWriterProvider(options()).write(request, never(), noProgress);

    expect(draft.title).toBe('Cold brew at home');
    expect(seen).toHaveLength(2);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
  });

  it('honours retry-after-ms too', async () => {
    handler = (res, _, i) => (i === 0 ? json(res, 503, 'busy', { 'retry-after-ms': '300' }) : json(res, 200, completion(JSON.stringify(article))));
    await new OpenAiWriterProvider(options()).write(request, never(), noProgress);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(290);
  });

  it('does not sit out a Retry-After longer than it accepts, and says when to come back', async () => {
    handler = (res) => json(res, 429, {}, { 'retry-after': '3600' });
    const error = await failure(new OpenAiWriterProvider(options()).write(request, never(), noProgress));
    expect(seen).toHaveLength(1);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('The writer provider is overloaded and asks to wait 3600 s; call the tool again after that.');
  });

  it('fails with an actionable, retryable ProviderError after three 500s', async () => {
    handler = (res) => json(res, 500, { error: { message: 'internal' } });
    const error = await failure(new OpenAiWriterProvider(options({ baseDelayMs: 100 })).write(request, never(), noProgress));

    expect(seen).toHaveLength(3);
    // Exponential backoff with jitter: 50-100 ms, then 100-200 ms.
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(50);
    expect(seen[2].at - seen[1].at).toBeGreaterThanOrEqual(100);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      'The writer provider failed with HTTP 500. It failed 3 times in a row; wait a minute and call the tool again, and if it keeps failing tell the user the writer service is unavailable.',
    );
  });

  it('does not retry malformed JSON, and says so', async () => {
    handler = (res) => json(res, 200, '{"choices": [');
    const error = await failure(new OpenAiWriterProvider(options()).write(request, never(), noProgress));
    expect(seen).toHaveLength(1);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^The writer provider answered with malformed JSON; call the tool again/);
  });

  it.each([
    ['prose instead of JSON', completion('Sure! Here is your article about cold brew.'), /did not answer with the JSON article/],
    ['no body', completion(JSON.stringify({ title: 'T', tags: [] })), /without an article body/],
    ['no title', completion(JSON.stringify({ body: 'Text.' })), /without a title/],
    ['no choices', { id: 'x' }, /answered without any text/],
    ['a refusal', { choices: [{ message: { content: null, refusal: 'I cannot help with that.' } }] }, /declined the brief \("I cannot help with that\."\)/],
  ])('turns an answer with %s into a ProviderError that is not retried', async (_, answer, message) => {
    handler = (res) => json(res, 200, answer);
    const error = await failure(new OpenAiWriterProvider(options()).write(request, never(), noProgress));
    expect(seen).toHaveLength(1);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(message);
  });

  it('does not retry a 400 and passes the provider message on', async () => {
    handler = (res) => json(res, 400, { error: { message: 'model "x" not found' } });
    const error = await failure(new OpenAiWriterProvider(options()).write(request, never(), noProgress));
    expect(seen).toHaveLength(1);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('(HTTP 400: "model "x" not found")');
  });

  it('stops at once when aborted during a backoff wait', async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    handler = (res) => {
      json(res, 500, {});
      later(50, () => {
        abortedAt = Date.now();
        controller.abort();
      });
    };
    await expect(new OpenAiWriterProvider(options({ baseDelayMs: 10_000 })).write(request, controller.signal, noProgress)).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(100);
    expect(seen).toHaveLength(1);
  });

  it('cancels the request in flight when aborted', async () => {
    const controller = new AbortController();
    handler = (res) => later(3_000, () => json(res, 200, completion(JSON.stringify(article))));
    later(100, () => controller.abort());
    const started = Date.now();
    await expect(new OpenAiWriterProvider(options({ timeoutMs: 10_000 })).write(request, controller.signal, noProgress)).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(Date.now() - started).toBeLessThan(500);
    expect(seen).toHaveLength(1);
  });

  it('retries network errors, then says it could not reach the provider', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(
      new OpenAiWriterProvider(options({ baseUrl: `http://127.0.0.1:${port}/v1`, maxAttempts: 2 })).write(request, never(), noProgress),
    );
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^Could not reach the writer provider \(ECONNREFUSED\)\. It failed 2 times in a row/);
  });
});

describe('OpenAiImageProvider against a fake server', () => {
  const png = PNG.sync.write(new PNG({ width: 64, height: 36 }));

  it('asks for base64 data at the size of the aspect ratio and reads the real size from the image', async () => {
    handler = (res) => json(res, 200, { created: 1, data: [{ b64_json: png.toString('base64') }] });
    const progress: number[] = [];
    const image = await new OpenAiImageProvider(options({ model: 'img-model' })).generate(
      { prompt: 'A lighthouse', aspectRatio: '16:9', style: 'ink sketch' },
      never(),
      (f) => progress.push(f),
    );

    expect(image).toEqual({ data: png, mimeType: 'image/png', width: 64, height: 36 });
    expect(progress).toEqual([1]);
    expect([seen[0].method, seen[0].url]).toEqual(['POST', '/v1/images/generations']);
    expect(seen[0].body).toEqual({ model: 'img-model', prompt: 'A lighthouse\n\nStyle: ink sketch', n: 1, size: '1792x1024', response_format: 'b64_json' });
    expect(seen[0].headers.authorization).toBe('Bearer sk-provider');
  });

  it.each([
    ['a URL instead of data', { data: [{ url: 'https://cdn.example/x.png' }] }, /without image data \(it sent a URL instead/],
    ['data that is no image', { data: [{ b64_json: Buffer.from('hello world, not an image').toString('base64') }] }, /not a PNG, JPEG or WebP image/],
    ['no data at all', {}, /without image data;/],
  ])('fails without retrying on %s', async (_, answer, message) => {
    handler = (res) => json(res, 200, answer);
    const error = await failure(new OpenAiImageProvider(options()).generate({ prompt: 'x', aspectRatio: '1:1' }, never(), noProgress));
    expect(seen).toHaveLength(1);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(message);
  });

  it('retries a 503 like the writer', async () => {
    handler = (res, _, i) => (i < 2 ? json(res, 503, {}) : json(res, 200, { data: [{ b64_json: png.toString('base64') }] }));
    const image = await new OpenAiImageProvider(options()).generate({ prompt: 'x', aspectRatio: '4:3' }, never(), noProgress);
    expect([image.width, image.height]).toEqual([64, 36]);
    expect(seen).toHaveLength(3);
    expect(seen[0].body.size).toBe('1024x768');
  });
});
