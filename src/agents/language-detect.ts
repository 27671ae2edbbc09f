/**
 * Which language a text is written in, from counts of very common words: simple, deterministic
 * and good enough to propose an answer for the writer's `language` question. Covers the languages
 * below; anything else (or too little text) is `null`.
 */
const STOPWORDS: Record<string, readonly string[]> = {
  en: ['the', 'and', 'is', 'are', 'was', 'of', 'to', 'in', 'that', 'it', 'with', 'for', 'this', 'you', 'not', 'have', 'be', 'on', 'they', 'what', 'which', 'from', 'your', 'can', 'will'],
  fr: ['le', 'la', 'les', 'et', 'est', 'des', 'une', 'un', 'du', 'que', 'qui', 'dans', 'pour', 'pas', 'sur', 'avec', 'ce', 'il', 'nous', 'vous', 'sont', 'mais', 'au', 'aux', 'cette'],
  de: ['der', 'die', 'das', 'und', 'ist', 'nicht', 'ein', 'eine', 'zu', 'den', 'mit', 'sich', 'auf', 'für', 'dem', 'auch', 'es', 'sie', 'wir', 'ich', 'sind', 'wie', 'oder', 'aber', 'wenn'],
  es: ['el', 'la', 'los', 'las', 'y', 'es', 'que', 'de', 'en', 'un', 'una', 'por', 'con', 'para', 'no', 'se', 'del', 'lo', 'como', 'más', 'pero', 'su', 'al', 'este', 'está'],
  it: ['il', 'la', 'che', 'di', 'e', 'è', 'un', 'una', 'per', 'non', 'con', 'sono', 'del', 'della', 'gli', 'le', 'si', 'anche', 'come', 'questo', 'ma', 'nel', 'alla', 'più', 'dei'],
  pt: ['o', 'a', 'os', 'as', 'e', 'que', 'de', 'do', 'da', 'em', 'um', 'uma', 'para', 'com', 'não', 'se', 'por', 'mais', 'como', 'mas', 'dos', 'das', 'ao', 'seu', 'está'],
  nl: ['de', 'het', 'een', 'en', 'is', 'van', 'dat', 'niet', 'op', 'te', 'zijn', 'met', 'voor', 'die', 'ook', 'als', 'maar', 'aan', 'er', 'wij', 'bij', 'naar', 'om', 'deze', 'wordt'],
};

const INDEX = new Map<string, string[]>();
for (const [lang, words] of Object.entries(STOPWORDS)) {
  for (const word of words) INDEX.set(word, [...(INDEX.get(word) ?? []), lang]);
}

/** Fewer stop words than this, and the text is too short to tell. */
const MIN_HITS = 5;
/** The winner must beat the runner-up by this factor (closely related languages share words). */
const MARGIN = 1.25;

export function detectLanguage(text: string): string | null {
  const counts = new Map<string, number>();
  let words = 0;
  for (const word of text.toLowerCase().split(/[^\p{L}]+/u)) {
    if (!word) continue;
    if (++words > 2_000) break;
    for (const lang of INDEX.get(word) ?? []) counts.set(lang, (counts.get(lang) ?? 0) + 1);
  }
  // Ties break by code, so the answer never depends on iteration order.
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const [first, second] = ranked;
  if (!first || first[1] < MIN_HITS) return null;
  if (second && first[1] < second[1] * MARGIN) return null;
  return first[0];
}
