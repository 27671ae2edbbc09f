import type { WriteRequest } from './ai.types.js';
import { composeDraft, LocalWriterProvider } from './local-writer.provider.js';

const base: WriteRequest = {
  brief: 'Write a post about brewing cold coffee at home. Keep it light.',
  config: { audience: 'beginner home baristas', tone: 'Friendly', language: 'en', topics: 'cold brew, grinders, water quality' },
};

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const headings = (body: string) => body.split('\n').filter((line) => line.startsWith('## '));
const contains = (text: string, word: string) => new RegExp(`(?<![\\p{L}\\p{N}_])${word}(?![\\p{L}\\p{N}_])`, 'iu').test(text);

describe('composeDraft (local writer)', () => {
  it('gives the same draft for the same request, and another for another brief', () => {
    expect(composeDraft(base)).toEqual(composeDraft(structuredClone(base)));
    expect(composeDraft({ ...base, brief: 'Write about sourdough starters.' }).body).not.toEqual(composeDraft(base).body);
  });

  it('writes an H1-less body: intro paragraph, ## sections, closing paragraph', () => {
    const { body } = composeDraft(base);
    const blocks = body.trim().split('\n\n');
    expect(body).not.toMatch(/^# /m);
    expect(blocks[0]).not.toMatch(/^#/);
    expect(blocks[1]).toMatch(/^## /);
    expect(blocks.at(-1)).toMatch(/^In short, /);
  });

  it('sets the number of sections and the size by length', () => {
    const short = composeDraft({ ...base, length: 'short' }).body;
    const medium = composeDraft({ ...base, length: 'medium' }).body;
    const long = composeDraft({ ...base, length: 'long' }).body;
    expect([short, medium, long].map((b) => headings(b).length)).toEqual([3, 4, 5]);
    expect(words(short)).toBeLessThan(words(medium));
    expect(words(medium)).toBeLessThan(words(long));
  });

  it('takes the length from the config unless the request names one', () => {
    expect(headings(composeDraft({ ...base, config: { ...base.config, length: 'long' } }).body)).toHaveLength(5);
    expect(headings(composeDraft({ ...base, length: 'short', config: { ...base.config, length: 'long' } }).body)).toHaveLength(3);
    expect(headings(composeDraft({ ...base, config: { ...base.config, length: 'whatever' } }).body)).toHaveLength(4);
  });

  it('never emits a banned word, in any field', () => {
    const banned = ['coffee', 'practical', 'steps', 'cold brew'];
    const free = composeDraft({ ...base, length: 'long' });
    const all = (d: typeof free) => [d.title, d.excerpt, d.body, ...d.tags].join('\n');
    // Without the ban these words are there, so the check below means something.
    for (const word of banned) expect(contains(all(free), word)).toBe(true);

    const draft = composeDraft({ ...base, length: 'long', config: { ...base.config, tone: 'practical', banned_words: 'Coffee, practical;steps\ncold  brew' } });
    for (const word of banned) expect(contains(all(draft), word)).toBe(false);
    expect(headings(draft.body)).toHaveLength(5);
    expect(draft.title).not.toBe('');
  });

  it('uses the given title, or one derived from the brief', () => {
    expect(composeDraft({ ...base, title: 'My own title' }).title).toBe('My own title');
    expect(composeDraft(base).title).toBe('Brewing cold coffee at home');
    expect(composeDraft({ ...base, brief: 'Explain how to pick a grinder' }).title).toBe('How to pick a grinder');
  });

  it('copies the brief literally, even when it looks like a placeholder or a replacement pattern', () => {
    const draft = composeDraft({ ...base, brief: 'Pricing in $& and {A} for {tone} shops' });
    expect(draft.title).toBe('Pricing in $& and {A} for {tone} shops');
    expect(draft.body).toContain('what matters most about Pricing in $& and {A} for {tone} shops.');
  });

  it('makes tags from the topics, and from the brief without topics', () => {
    expect(composeDraft(base).tags).toEqual(['cold brew', 'grinders', 'water quality']);
    expect(composeDraft({ ...base, config: {} }).tags).toEqual(['brewing', 'cold', 'coffee']);
  });

  it('writes for the audience and tone, and names the topics in the headings', () => {
    const draft = composeDraft(base);
    expect(draft.body).toContain('beginner home baristas');
    expect(draft.body).toContain('This friendly piece');
    expect(headings(draft.body)[0]).toMatch(/^## Cold brew: /);
    expect(draft.excerpt).toMatch(/^A friendly look at brewing cold coffee at home for beginner home baristas/);
  });

  it('says plainly that a non-English draft needs translating, and never poses as a model', () => {
    const french = composeDraft({ ...base, config: { ...base.config, language: 'fr' } });
    expect(french.body).toContain('the blog is in French, so translate it');
    expect(composeDraft(base).body).not.toContain('translate');
    for (const d of [french, composeDraft(base)]) expect(JSON.stringify(d)).not.toMatch(/as an ai|language model|i am an|I'm an/i);
  });
});

describe('LocalWriterProvider', () => {
  it('answers at once without a delay, reporting completion', async () => {
    const progress: number[] = [];
    const started = Date.now();
    const draft = await new LocalWriterProvider(0).write(base, new AbortController().signal, (f) => progress.push(f));
    expect(Date.now() - started).toBeLessThan(100);
    expect(draft).toEqual(composeDraft(base));
    expect(progress).toEqual([1]);
  });

  it('takes the configured delay in ten steps, reporting each', async () => {
    const progress: number[] = [];
    const started = Date.now();
    await new LocalWriterProvider(200).write(base, new AbortController().signal, (f) => progress.push(f));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(progress).toEqual([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
  });

  it('stops promptly with an AbortError when aborted mid-delay', async () => {
    const controller = new AbortController();
    const progress: number[] = [];
    const started = Date.now();
    setTimeout(() => controller.abort(), 60);
    await expect(new LocalWriterProvider(5_000).write(base, controller.signal, (f) => progress.push(f))).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(300);
    expect(progress.length).toBe(0);
  });

  it('refuses to start on a signal already aborted', async () => {
    await expect(new LocalWriterProvider(0).write(base, AbortSignal.abort(), () => undefined)).rejects.toMatchObject({ name: 'AbortError' });
  });
});
