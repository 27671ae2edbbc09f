import { MESSAGES, count, languageOf, type Plural } from '../../views/messages.js';

// The MCP Apps views' own words (docs/protocol.md#mcp-apps-views), one table per language. Each table
// has the English table's type, so a missing key already fails `tsc --noEmit -p tsconfig.json` (this
// file brings views/messages.ts into that program); this test says the same at run time, and checks
// the shape of each entry, the plural forms and the choice of table.

const LANGUAGES = Object.keys(MESSAGES) as (keyof typeof MESSAGES)[];

/** Each entry's path and kind: `text`, `function/<arity>` or `plural`, nested tables walked. */
function shape(table: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(table).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    if (typeof value === 'string') return [`${path} text`];
    if (typeof value === 'function') return [`${path} function/${value.length}`];
    if (value && typeof value === 'object' && 'other' in value) return [`${path} plural`];
    return shape(value as Record<string, unknown>, `${path}.`);
  });
}

function plurals(table: Record<string, unknown>): Plural[] {
  return Object.values(table).flatMap((value) => {
    if (value && typeof value === 'object') return 'other' in value ? [value as Plural] : plurals(value as Record<string, unknown>);
    return [];
  });
}

function texts(table: Record<string, unknown>): string[] {
  return Object.values(table).flatMap((value) => {
    if (typeof value === 'string') return [value];
    if (value && typeof value === 'object') return texts(value as Record<string, unknown>);
    return [];
  });
}

describe('the views’ message tables', () => {
  it('English, French, German, Spanish and Japanese, each with every English key, of the same kind', () => {
    expect(LANGUAGES).toEqual(['en', 'fr', 'de', 'es', 'ja']);
    const english = shape(MESSAGES.en);
    expect(english.length).toBeGreaterThan(40);
    for (const language of LANGUAGES) expect([language, shape(MESSAGES[language])]).toEqual([language, english]);
  });

  it('no empty text; every plural has a form for each category its language uses', () => {
    for (const language of LANGUAGES) {
      expect([language, texts(MESSAGES[language]).filter((text) => text.trim() === '')]).toEqual([language, []]);
      const categories = new Intl.PluralRules(language).resolvedOptions().pluralCategories;
      for (const forms of plurals(MESSAGES[language])) {
        expect([language, categories.filter((category) => !forms[category]?.includes('#'))]).toEqual([language, []]);
      }
    }
  });

  it('the table is the locale’s language subtag’s, English otherwise', () => {
    const cases: [string | undefined, string][] = [
      ['fr-FR', 'fr'],
      ['fr-CA', 'fr'],
      ['fr', 'fr'],
      ['de-AT', 'de'],
      ['es-419', 'es'],
      ['ja-JP', 'ja'],
      ['en-GB', 'en'],
      ['xx-YY', 'en'],
      ['it-IT', 'en'],
      ['not a locale', 'en'],
      ['', 'en'],
      [undefined, 'en'],
    ];
    expect(cases.map(([locale]) => [locale, languageOf(locale)])).toEqual(cases);
  });

  it('counts take the plural form of the language and the digits of the locale', () => {
    expect([1, 2].map((n) => count(MESSAGES.en.words, n, 'en', 'en-GB'))).toEqual(['1 word', '2 words']);
    expect([0, 1, 2, 1_000_000].map((n) => count(MESSAGES.fr.words, n, 'fr', 'fr-FR'))).toEqual(['0 mot', '1 mot', '2 mots', '1\u202f000\u202f000 de mots']);
    expect(count(MESSAGES.de.words, 1234, 'de', 'de-DE')).toBe('1.234 Wörter');
    expect(count(MESSAGES.es.articleCount, 1, 'es', 'es-ES')).toBe('1 artículo');
    expect(count(MESSAGES.ja.articleCount, 3, 'ja', 'ja-JP')).toBe('3 件の記事');
  });
});
