import { detectLanguage } from './language-detect.js';
import { WRITER_QUESTIONS, type WriterQuestionId } from './writer-questions.js';

/** What `setup_required` tells about the project, computed from its own articles. */
export interface ProjectContext {
  project: { id: string; name: string };
  article_count: number;
  /** The most used tags, most used first. */
  top_tags: string[];
  /** Language codes detected in the articles, most frequent first. */
  languages: string[];
  /** Titles of the most recently updated articles. */
  recent_titles: string[];
  /** Null when the project has no articles. */
  median_word_count: number | null;
}

/** An article as the context reads it. */
export interface ContextArticle {
  title: string;
  tags: string[];
  body_head: string;
  word_count: number;
}

export interface ProposedQuestion {
  id: WriterQuestionId;
  question: string;
  type: 'text' | 'choice';
  options?: string[];
  /** Derived from the project context where it can be, else a neutral default; null when only the user can say. */
  proposed_answer: string | null;
}

const TOP_TAGS = 5;
const RECENT_TITLES = 5;

/** The context from a sample of the project's articles, most recently updated first. Deterministic. */
export function buildProjectContext(project: { id: string; name: string }, articleCount: number, sample: ContextArticle[]): ProjectContext {
  const tagCounts = new Map<string, number>();
  for (const article of sample) for (const tag of new Set(article.tags)) tagCounts.set(tag, (tagCounts.get(tag) ?? 0) + 1);
  const languageCounts = new Map<string, number>();
  for (const article of sample) {
    const lang = detectLanguage(`${article.title}\n${article.body_head}`);
    if (lang) languageCounts.set(lang, (languageCounts.get(lang) ?? 0) + 1);
  }
  const counts = sample.map((a) => a.word_count).sort((a, b) => a - b);
  const mid = counts.length >> 1;
  return {
    project,
    article_count: articleCount,
    top_tags: ranked(tagCounts).slice(0, TOP_TAGS),
    languages: ranked(languageCounts),
    recent_titles: sample.slice(0, RECENT_TITLES).map((a) => a.title),
    median_word_count: counts.length ? Math.round(counts.length % 2 ? counts[mid] : (counts[mid - 1] + counts[mid]) / 2) : null,
  };
}

/** The writer's questions with proposed answers taken from the context. */
export function proposeAnswers(context: ProjectContext): ProposedQuestion[] {
  const tags = context.top_tags;
  const proposals: Record<WriterQuestionId, string | null> = {
    audience: tags.length ? `Readers interested in ${listOf(tags.slice(0, 3))}` : null,
    tone: 'Friendly, clear and practical',
    language: context.languages[0] ?? 'en',
    topics: tags.length ? tags.join(', ') : null,
    length: lengthFor(context.median_word_count),
    banned_words: '',
    image_style: 'Clean, modern flat illustration with a calm palette',
  };
  return WRITER_QUESTIONS.map((q) => ({
    id: q.id,
    question: q.question,
    type: q.type,
    ...(q.options ? { options: [...q.options] } : {}),
    proposed_answer: proposals[q.id],
  }));
}

/** The length whose drafts are closest to what the project already publishes. */
export function lengthFor(medianWords: number | null): 'short' | 'medium' | 'long' {
  if (medianWords === null) return 'medium';
  if (medianWords < 600) return 'short';
  if (medianWords <= 1200) return 'medium';
  return 'long';
}

function ranked(counts: Map<string, number>): string[] {
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([key]) => key);
}

function listOf(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
