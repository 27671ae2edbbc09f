import { buildProjectContext, lengthFor, proposeAnswers, type ContextArticle } from './project-context.js';

const project = { id: 'p1', name: 'Bread blog' };
const article = (title: string, tags: string[], word_count: number, body_head = ''): ContextArticle => ({ title, tags, word_count, body_head });
const ENGLISH = 'The bread is what you need for the table, and this is the way to bake it with the oven.';

describe('buildProjectContext', () => {
  it('is empty for a project without articles, and proposes neutral defaults', () => {
    const context = buildProjectContext(project, 0, []);
    expect(context).toEqual({ project, article_count: 0, top_tags: [], languages: [], recent_titles: [], median_word_count: null });
    const proposed = Object.fromEntries(proposeAnswers(context).map((q) => [q.id, q.proposed_answer]));
    expect(proposed).toEqual({
      audience: null,
      tone: expect.any(String),
      language: 'en',
      topics: null,
      length: 'medium',
      banned_words: '',
      image_style: expect.any(String),
    });
  });

  it('ranks tags by the articles using them (ties alphabetically), keeps the five first, and takes recent titles in order', () => {
    const sample = [
      article('F', ['b', 'a', 'a'], 100),
      article('E', ['b', 'c'], 300),
      article('D', ['d', 'e', 'f', 'g'], 200),
      article('C', ['c'], 400),
      article('B', [], 500),
      article('A', ['a'], 600),
    ];
    const context = buildProjectContext(project, 42, sample);
    expect(context.article_count).toBe(42);
    expect(context.top_tags).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(context.recent_titles).toEqual(['F', 'E', 'D', 'C', 'B']);
    // Even count: the mean of the two middle values (300 and 400).
    expect(context.median_word_count).toBe(350);
    expect(buildProjectContext(project, 3, sample.slice(0, 3)).median_word_count).toBe(200);
  });

  it('lists detected languages by the number of articles in each', () => {
    const french = 'Le pain est une source de joie pour les enfants et les parents, avec le beurre qui est là.';
    const context = buildProjectContext(project, 3, [
      article('a', [], 10, ENGLISH),
      article('b', [], 10, french),
      article('c', [], 10, french),
      article('d', [], 10, 'x'),
    ]);
    expect(context.languages).toEqual(['fr', 'en']);
    const proposed = Object.fromEntries(proposeAnswers(context).map((q) => [q.id, q.proposed_answer]));
    expect(proposed.language).toBe('fr');
  });

  it('proposes audience and topics from the tags, and the length from the median', () => {
    const context = buildProjectContext(project, 2, [article('a', ['sourdough', 'rye'], 1500), article('b', ['sourdough', 'baking'], 1300)]);
    const questions = proposeAnswers(context);
    const proposed = Object.fromEntries(questions.map((q) => [q.id, q.proposed_answer]));
    expect(proposed).toMatchObject({ audience: 'Readers interested in sourdough, baking and rye', topics: 'sourdough, baking, rye', length: 'long' });
    expect(questions.find((q) => q.id === 'length')).toMatchObject({ type: 'choice', options: ['short', 'medium', 'long'] });
    expect(questions.filter((q) => q.id !== 'length').every((q) => q.type === 'text' && q.options === undefined)).toBe(true);
  });
});

describe('lengthFor', () => {
  it.each([
    [null, 'medium'],
    [0, 'short'],
    [599, 'short'],
    [600, 'medium'],
    [1200, 'medium'],
    [1201, 'long'],
  ] as const)('%s words → %s', (words, length) => {
    expect(lengthFor(words)).toBe(length);
  });
});
