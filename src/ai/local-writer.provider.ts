import { steppedDelay } from './abortable-delay.js';
import type { ProgressReporter, WriteRequest, WriterConfig, WriterProvider, WrittenDraft } from './ai.types.js';
import { hashString, seededRandom, shuffled } from './seeded-random.js';

type Length = 'short' | 'medium' | 'long';

// How long each length is: ## sections, paragraphs per section, sentences per paragraph.
const SHAPES: Record<Length, { sections: number; paragraphs: number; sentences: number; intro: number }> = {
  short: { sections: 3, paragraphs: 1, sentences: 3, intro: 2 },
  medium: { sections: 4, paragraphs: 2, sentences: 3, intro: 3 },
  long: { sections: 5, paragraphs: 3, sentences: 3, intro: 4 },
};

interface SectionKind {
  heading: string;
  sentences: string[];
}

// {S} subject, {T} section topic (or subject), {A} audience.
const CONTEXT: SectionKind = {
  heading: 'Why it matters',
  sentences: [
    'Before going into details, it helps to see why {S} matters to {A}.',
    'Most questions about {T} come from a few recurring situations.',
    'Getting the basics right saves time later, especially when things get busy.',
    'Small decisions about {T} tend to add up over weeks and months.',
    'A clear picture of the goal makes every later choice easier.',
    'It is worth asking what success would look like before changing anything.',
  ],
};

const OTHER_KINDS: SectionKind[] = [
  {
    heading: 'Key ideas',
    sentences: [
      'A handful of ideas carry most of the weight when it comes to {T}.',
      'One is to keep things simple until there is a reason not to.',
      'Another is consistency: a modest routine beats an occasional big effort.',
      'Feedback matters too, because you cannot improve what you never look at.',
      'These ideas apply to {S} whatever the scale.',
      'None of them needs special tools, only a little attention.',
    ],
  },
  {
    heading: 'Putting it into practice',
    sentences: [
      'Start with one small, concrete change related to {T}.',
      'Write down what you did and what happened, even in a few words.',
      'After a week or two, compare the notes and keep what worked.',
      'If something feels awkward, adjust it instead of dropping it altogether.',
      'Sharing the results with others often brings useful suggestions.',
      'Over time these small steps turn into a habit.',
    ],
  },
  {
    heading: 'Common pitfalls',
    sentences: [
      'The most common mistake with {T} is trying to change everything at once.',
      "Another is copying someone else's approach without checking that it fits.",
      'It is also easy to underestimate how long a new routine takes to settle.',
      'Skipping the basics usually costs more time than it saves.',
      'When results stall, go back to the last step that clearly worked.',
      'A short checklist helps avoid repeating the same slip.',
    ],
  },
  {
    heading: 'A worked example',
    sentences: [
      'Picture a reader who wants to get better at {T}.',
      'They pick one goal for the month and keep it visible.',
      'Each week they spend a little time on it and note what changed.',
      'By the end of the month the progress is easy to see.',
      'The same pattern works for {S} in most situations.',
      'What matters is the steady rhythm, not the size of each step.',
    ],
  },
  {
    heading: 'Going further',
    sentences: [
      'Once the basics of {T} feel natural, there is room to explore.',
      'Reading what others have tried is a good source of fresh ideas.',
      'Experiments are cheaper when they are small and clearly scoped.',
      'Revisit your goals from time to time; they tend to shift.',
      'Keep an eye on what people ask about {S}.',
      'Their questions often point to the next thing worth learning.',
    ],
  },
];

const GENERAL = [
  'This holds whether you are just starting or have years of experience.',
  'A little patience goes a long way here.',
  'Concrete examples make the idea much easier to apply.',
  'It is fine to adapt this to your own situation.',
  'The details vary, but the principle stays the same.',
  'Clear goals make it easier to notice real progress.',
];

const INTRO = [
  '{S_} comes up often for {A}, and it rewards a closer look.',
  'This {tone} piece walks through what matters most about {S}.',
  'It starts with the context, moves on to the practical side and ends with a short summary.',
  'Each section stands on its own, so you can skip to the part you need.',
];

const CONCLUSION = [
  'In short, {S} is less about big moves than about steady, well-chosen steps.',
  'Start with the idea that fits your situation best and build from there.',
  'Come back to these sections when you want a quick reminder.',
  'Questions and experiences from {A} are the best guide to what to explore next.',
];

const LANGUAGES: Record<string, string> = {
  en: 'English',
  fr: 'French',
  es: 'Spanish',
  de: 'German',
  it: 'Italian',
  pt: 'Portuguese',
  nl: 'Dutch',
  pl: 'Polish',
  sv: 'Swedish',
  da: 'Danish',
  no: 'Norwegian',
  fi: 'Finnish',
  cs: 'Czech',
  ru: 'Russian',
  uk: 'Ukrainian',
  tr: 'Turkish',
  ja: 'Japanese',
  zh: 'Chinese',
  ko: 'Korean',
  ar: 'Arabic',
  hi: 'Hindi',
};

const STOPWORDS = new Set(
  'about above after again also because been before being between both could does doing during each from have having here into just more most other over same should some such than that their them then there these they this those through under until very what when where which while with would your yours how why'.split(
    ' ',
  ),
);

// Leading instructions that are not part of the subject ("Write a short post about ...").
const LEAD_IN =
  /^(?:please\s+)?(?:(?:write|draft|create|compose|produce|prepare|explain|describe|discuss|cover)\s+(?:me\s+|us\s+)?)?(?:(?:an?|the|some)\s+)?(?:(?:short|long|quick|detailed|brief|medium)\s+)?(?:(?:blog\s+)?(?:article|post|piece|guide|overview|introduction|intro|story)\s+)?(?:(?:about|on|of|for|covering|explaining)\s+)?/i;

/** The offline writer: a deterministic, honest markdown template built from the brief and the writer config. */
export class LocalWriterProvider implements WriterProvider {
  readonly name = 'local';

  constructor(private readonly delayMs = 0) {}

  async write(req: WriteRequest, signal: AbortSignal, progress: ProgressReporter): Promise<WrittenDraft> {
    signal.throwIfAborted();
    const draft = composeDraft(req);
    await steppedDelay(this.delayMs, signal, progress);
    if (this.delayMs <= 0) progress(1);
    return draft;
  }
}

/** Builds the local draft; the same request always gives the same draft. */
export function composeDraft(req: WriteRequest): WrittenDraft {
  const config = req.config ?? {};
  const length = lengthOf(req.length ?? config.length);
  const shape = SHAPES[length];
  const banned = splitList(config.banned_words).map((w) => w.toLowerCase());
  const scrub = (text: string) => removeBanned(text, banned);

  const subject = scrub(subjectOf(req.brief)) || 'this subject';
  const audience = scrub(oneLine(config.audience)) || 'readers';
  const tone = scrub(oneLine(config.tone).split(/[.;]/)[0].toLowerCase()) || 'practical';
  const topics = splitList(config.topics).map(oneLine).map(scrub).filter(Boolean);
  const random = seededRandom(
    hashString(JSON.stringify([req.brief, req.title, length, config.audience, config.tone, config.language, config.topics, config.banned_words])),
  );

  // One pass with a function: text from the brief is never re-read as a placeholder or a `$&` pattern.
  const fill = (template: string, topic?: string) => {
    const values: Record<string, string> = { S_: capitalize(subject), S: subject, T: topic ?? subject, A: audience, tone };
    return template.replace(/\{(S_|S|T|A|tone)\}/g, (_, key: string) => values[key]);
  };

  // A deterministic choice of sections, kept in their natural reading order.
  const chosen = new Set(shuffled(OTHER_KINDS, random).slice(0, shape.sections - 1));
  const kinds = [CONTEXT, ...OTHER_KINDS.filter((kind) => chosen.has(kind))];
  const parts: string[] = [
    INTRO.slice(0, shape.intro)
      .map((s) => fill(s))
      .join(' '),
  ];
  const needed = shape.paragraphs * shape.sentences;
  kinds.forEach((kind, i) => {
    const topic = topics[i];
    parts.push(`## ${topic ? `${capitalize(topic)}: ${kind.heading.toLowerCase()}` : kind.heading}`);
    const sentences = pickInOrder([...kind.sentences, ...pickInOrder(GENERAL, Math.max(0, needed - kind.sentences.length), random)], needed, random);
    for (let p = 0; p < shape.paragraphs; p++) {
      parts.push(
        sentences
          .slice(p * shape.sentences, (p + 1) * shape.sentences)
          .map((s) => fill(s, topic))
          .join(' '),
      );
    }
  });
  parts.push(
    CONCLUSION.slice(0, shape.sections - 1)
      .map((s) => fill(s))
      .join(' '),
  );

  const language = languageLabel(config.language);
  if (language && language !== 'English') {
    // The templates are English only; say so rather than pass them off as the asked language.
    parts.push(`_This template draft is written in English; the blog is in ${language}, so translate it before publishing._`);
  }

  const body = parts
    .map((part, i) => {
      const clean = scrub(part);
      return /^##\s*$/.test(clean) ? `## Part ${i}` : clean;
    })
    .filter((part) => part.length > 0)
    .join('\n\n');

  const title = scrub(oneLine(req.title)) || capitalize(truncateWords(subject, 80));
  const covered = kinds.map((kind) => kind.heading.toLowerCase());
  const excerpt = scrub(truncateWords(`A ${tone} look at ${subject} for ${audience}, covering ${covered.slice(0, -1).join(', ')} and ${covered.at(-1)}.`, 240));
  const tags = (topics.length ? topics : keywords(subject))
    .map((t) => t.toLowerCase().slice(0, 40).trim())
    .filter((t, i, all) => t && all.indexOf(t) === i && scrub(t) === t)
    .slice(0, 5);

  return { title, excerpt, body: `${body}\n`, tags };
}

/** `count` items of `items` chosen by `random`, in their original order (so the prose keeps its logic). */
function pickInOrder<T>(items: readonly T[], count: number, random: () => number): T[] {
  const keep = new Set(shuffled([...items.keys()], random).slice(0, count));
  return items.filter((_, i) => keep.has(i));
}

function lengthOf(value: WriterConfig['length']): Length {
  const v = value?.trim().toLowerCase();
  return v === 'short' || v === 'long' ? v : 'medium';
}

function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

function splitList(text: string | undefined): string[] {
  return (text ?? '')
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function truncateWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 0 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

/** The brief's first sentence without instructions such as "Write a post about". */
function subjectOf(brief: string): string {
  const first = oneLine(brief).split(/(?<=[.!?])\s/)[0] ?? '';
  const words = first
    .replace(/[.!?;:,]+$/, '')
    .replace(LEAD_IN, '')
    .split(' ')
    .filter(Boolean);
  return words
    .slice(0, 12)
    .join(' ')
    .replace(/[,;:]+$/, '');
}

function keywords(subject: string): string[] {
  return subject
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 4 && !STOPWORDS.has(w))
    .slice(0, 3);
}

function languageLabel(language: string | undefined): string {
  const value = oneLine(language);
  if (!value) return '';
  const code = /^([a-z]{2})(?:[-_][a-z]{2,4})?$/i.exec(value)?.[1]?.toLowerCase();
  return (code && LANGUAGES[code]) || capitalize(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Removes every banned word or phrase (whole words, any case), then tidies the spaces left behind. */
function removeBanned(text: string, banned: string[]): string {
  if (!banned.length) return text;
  const patterns = banned.map((word) => new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(word).replace(/\s+/g, '\\s+')}(?![\\p{L}\\p{N}_])`, 'giu'));
  let out = text;
  // Removing one phrase can join words into another banned phrase; repeat until nothing matches.
  for (let pass = 0; pass < 5 && patterns.some((p) => out.search(p) >= 0); pass++) {
    for (const p of patterns) out = out.replace(p, '');
    out = out
      .replace(/[ \t]{2,}/g, ' ')
      .replace(/ +([,.;:!?])/g, '$1')
      .replace(/^[ \t]+|[ \t]+$/gm, '');
  }
  return out;
}
