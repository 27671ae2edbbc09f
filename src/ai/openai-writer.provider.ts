import type { ProgressReporter, WriteRequest, WriterProvider, WrittenDraft } from './ai.types.js';
import { ProviderError } from './ai.types.js';
import { OpenAiHttpClient, type OpenAiProviderOptions } from './openai-http.client.js';

const WORDS: Record<string, string> = { short: 'about 300', medium: 'about 700', long: 'about 1200' };

/** Writer over an OpenAI-compatible chat-completions API, asked for a JSON object. */
export class OpenAiWriterProvider implements WriterProvider {
  readonly name = 'openai';
  private readonly client: OpenAiHttpClient;

  constructor(private readonly options: OpenAiProviderOptions) {
    this.client = new OpenAiHttpClient('writer', options);
  }

  async write(req: WriteRequest, signal: AbortSignal, progress: ProgressReporter): Promise<WrittenDraft> {
    const body = {
      ...(this.options.model ? { model: this.options.model } : {}),
      messages: [
        { role: 'system', content: systemPrompt(req) },
        { role: 'user', content: userPrompt(req) },
      ],
      response_format: { type: 'json_object' },
    };
    const answer = await this.client.postJson('chat/completions', body, signal);
    const draft = parseDraft(answer, req);
    progress(1);
    return draft;
  }
}

function systemPrompt(req: WriteRequest): string {
  const c = req.config ?? {};
  const length = req.length ?? c.length ?? 'medium';
  const lines = [
    'You write blog article drafts. Answer with one JSON object and nothing else, with exactly these keys:',
    '"title" (string), "excerpt" (one or two plain-text sentences), "body" (markdown without an H1 heading:',
    'an introduction paragraph, 3 to 5 sections under ## headings, and a concluding paragraph),',
    '"tags" (an array of 3 to 6 short lowercase strings). Do not use HTML or scripts.',
    c.audience && `Audience: ${c.audience}.`,
    c.tone && `Tone: ${c.tone}.`,
    c.language && `Write everything in this language: ${c.language}.`,
    c.topics && `The blog covers: ${c.topics}.`,
    `Length: ${length}${WORDS[length] ? ` (${WORDS[length]} words)` : ''}.`,
    c.banned_words && `Never use these words: ${c.banned_words}.`,
  ];
  return lines.filter(Boolean).join('\n');
}

function userPrompt(req: WriteRequest): string {
  return req.title ? `Brief: ${req.brief}\nUse exactly this title: ${req.title}` : `Brief: ${req.brief}`;
}

/** Reads the draft out of a chat-completions answer, tolerating code fences and loose tag formats. */
export function parseDraft(answer: unknown, req: Pick<WriteRequest, 'title'>): WrittenDraft {
  const message = (answer as { choices?: { message?: { content?: unknown; refusal?: unknown } }[] })?.choices?.[0]?.message;
  if (typeof message?.refusal === 'string' && message.refusal.trim()) {
    throw new ProviderError(
      `The writer model declined the brief ("${oneLine(message.refusal, 200)}"); rephrase the brief and call write_article again.`,
      false,
    );
  }
  const content = message?.content;
  if (typeof content !== 'string' || !content.trim()) {
    throw new ProviderError(
      'The writer provider answered without any text; call write_article again, and if it keeps happening tell the user the writer provider is misbehaving.',
      false,
    );
  }
  const object = parseObject(content);
  if (!object) {
    throw new ProviderError(
      'The writer model did not answer with the JSON article it was asked for; call write_article again, perhaps with a shorter, clearer brief.',
      false,
    );
  }

  const rawBody = [object.body, object.content, object.markdown].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  if (!rawBody) {
    throw new ProviderError('The writer model answered without an article body; call write_article again, perhaps with a shorter, clearer brief.', false);
  }
  // The title is stored apart, so a leading H1 would repeat it.
  const body = rawBody
    .trim()
    .replace(/^#(?!#)[^\n]*\n+/, '')
    .trim();
  const title = (typeof object.title === 'string' && oneLine(object.title, 300)) || oneLine(req.title ?? '', 300);
  if (!title) {
    throw new ProviderError('The writer model answered without a title; call write_article again with a title argument.', false);
  }
  const excerpt = (typeof object.excerpt === 'string' && oneLine(object.excerpt, 500)) || firstParagraph(body);
  return { title, excerpt, body: `${body}\n`, tags: tagsOf(object.tags) };
}

function parseObject(content: string): Record<string, unknown> | undefined {
  const unfenced = content.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, '$1');
  const candidates = [unfenced, unfenced.slice(unfenced.indexOf('{'), unfenced.lastIndexOf('}') + 1)];
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Try the next, looser candidate.
    }
  }
  return undefined;
}

function tagsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return list
    .filter((t): t is string => typeof t === 'string')
    .map((t) => oneLine(t.replace(/^#/, ''), 50).toLowerCase())
    .filter((t, i, all) => t && all.indexOf(t) === i)
    .slice(0, 10);
}

function firstParagraph(body: string): string {
  const paragraph = body.split(/\n\s*\n/).find((p) => p.trim() && !/^\s*(#|[-*+] |\d+\. |>|```)/.test(p)) ?? '';
  return oneLine(paragraph.replace(/[*_`]/g, ''), 300);
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
