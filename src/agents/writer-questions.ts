/** One question of the writer's setup, as `setup_required` puts it to the user. */
export interface SetupQuestion {
  id: WriterQuestionId;
  question: string;
  /** `text` (free text) or `choice` (one of `options`). */
  type: 'text' | 'choice';
  options?: readonly string[];
  /** The longest answer accepted. */
  maxLength: number;
}

export const WRITER_QUESTION_IDS = ['audience', 'tone', 'language', 'topics', 'length', 'banned_words', 'image_style'] as const;
export type WriterQuestionId = (typeof WRITER_QUESTION_IDS)[number];
export type WriterAnswers = Partial<Record<WriterQuestionId, string>>;

export const LENGTHS = ['short', 'medium', 'long'] as const;

/** The questions of the `writer` agent, in the order they are asked. */
export const WRITER_QUESTIONS: readonly SetupQuestion[] = [
  { id: 'audience', question: 'Who reads this blog?', type: 'text', maxLength: 500 },
  { id: 'tone', question: 'What tone should the articles have (for example friendly, formal, playful)?', type: 'text', maxLength: 200 },
  { id: 'language', question: 'In which language should articles be written (a language code such as en, fr, de)?', type: 'text', maxLength: 50 },
  { id: 'topics', question: 'Which topics should the blog cover (comma-separated)?', type: 'text', maxLength: 1000 },
  { id: 'length', question: 'How long should a typical article be?', type: 'choice', options: LENGTHS, maxLength: 10 },
  { id: 'banned_words', question: 'Which words or phrases must the writer never use (comma-separated; empty for none)?', type: 'text', maxLength: 1000 },
  { id: 'image_style', question: 'What visual style should generated images have?', type: 'text', maxLength: 300 },
];

/** JSON Schema of `configure_agent`'s `answers`: one string property per question, nothing else. */
export const WRITER_ANSWERS_SCHEMA = {
  type: 'object',
  description: `Answers by question id: ${WRITER_QUESTION_IDS.join(', ')}. Answers not given keep their value from the previous version.`,
  properties: Object.fromEntries(
    WRITER_QUESTIONS.map((q) => [
      q.id,
      q.options
        ? ({ type: 'string', enum: [...q.options], description: q.question } as const)
        : ({ type: 'string', maxLength: q.maxLength, description: q.question } as const),
    ]),
  ),
  additionalProperties: false,
  minProperties: 1,
} as const;
