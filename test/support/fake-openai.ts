import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';

/** A request the fake received. */
export interface FakeOpenAiRequest {
  path: string;
  authorization: string | undefined;
  /** Every header, as Node lower-cases them (`traceparent`, `tracestate`...). */
  headers: IncomingMessage['headers'];
  /** The raw body, as sent. */
  body: string;
}

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1`, for `*_BASE_URL`. */
  url: string;
  seen: FakeOpenAiRequest[];
  /** When set, every request is answered with it (to play a failing provider). */
  answer: { status: number; body: string } | null;
  close(): Promise<void>;
}

/**
 * The `size` values OpenAI's images API accepts per model, as its reference lists them; written out
 * here on purpose, not imported from src/, so that the server's choice is checked against the API's
 * rule and not against itself.
 */
const OPENAI_SIZES: [prefix: string, sizes: string[]][] = [
  ['gpt-image-', ['1024x1024', '1536x1024', '1024x1536']],
  ['dall-e-3', ['1024x1024', '1792x1024', '1024x1792']],
  ['dall-e-2', ['256x256', '512x512', '1024x1024']],
];

const quote = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * A fake OpenAI-compatible API on loopback. `POST /v1/images/generations` answers as the real API:
 * for a model it knows (gpt-image-*, dall-e-3, dall-e-2, and dall-e-2 when no model is named, its
 * default) a `size` the model does not accept is a 400 in OpenAI's error shape, and so is
 * `response_format` sent to a gpt-image model (they always answer base64); a model it does not know
 * is a self-hosted server that accepts `otherSizes` (any `WxH` when not given). An accepted request
 * gets a PNG of exactly the size asked, as `b64_json`. Other paths are 404 unless `answer` is set.
 */
export async function startFakeOpenAi(opts: { otherSizes?: string[] } = {}): Promise<FakeOpenAi> {
  const fake: FakeOpenAi = { url: '', seen: [], answer: null, close: async () => undefined };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      fake.seen.push({ path: req.url ?? '', authorization: req.headers.authorization, headers: req.headers, body });
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(typeof json === 'string' ? json : JSON.stringify(json));
      if (fake.answer) return send(fake.answer.status, fake.answer.body);
      if (req.method !== 'POST' || req.url !== '/v1/images/generations')
        return send(404, { error: { message: `Unknown path ${req.url}`, type: 'invalid_request_error', param: null, code: 'unknown_url' } });
      let request: { model?: string; size?: string; response_format?: string };
      try {
        request = JSON.parse(body) as typeof request;
      } catch {
        return send(400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null } });
      }
      const model = request.model ?? 'dall-e-2';
      const known = OPENAI_SIZES.find(([prefix]) => model.startsWith(prefix));
      const size = request.size ?? '1024x1024';
      const invalid = (param: string, message: string, code: string) => send(400, { error: { message, type: 'invalid_request_error', param, code } });
      if (known?.[0] === 'gpt-image-' && request.response_format !== undefined) {
        return invalid('response_format', "Unknown parameter: 'response_format'.", 'unknown_parameter');
      }
      const accepted = known ? known[1] : opts.otherSizes;
      if (accepted ? !accepted.includes(size) : !/^\d+x\d+$/.test(size)) {
        return invalid('size', `Invalid value: '${size}'. Supported values are: ${quote(accepted ?? ['WIDTHxHEIGHT'])}.`, 'invalid_value');
      }
      const [width, height] = size.split('x').map(Number);
      // No row filters: pngjs' adaptive filtering takes seconds on a large image under Jest's transform.
      const png = PNG.sync.write(new PNG({ width, height }), { filterType: 0 });
      send(200, { created: Math.floor(Date.now() / 1000), data: [{ b64_json: png.toString('base64') }] });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return fake;
}
