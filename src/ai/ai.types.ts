/** The project's writer agent config, as answered through `configure_agent` (every field free text). */
export interface WriterConfig {
  audience?: string;
  tone?: string;
  language?: string;
  /** Comma-separated list. */
  topics?: string;
  length?: 'short' | 'medium' | 'long' | string;
  /** Comma-separated words or phrases that must never appear in a draft. */
  banned_words?: string;
  image_style?: string;
}

/** What `write_article` asks a writer for. `length` overrides `config.length`. */
export interface WriteRequest {
  brief: string;
  title?: string;
  length?: 'short' | 'medium' | 'long';
  config: WriterConfig;
}

/** A draft as a writer returns it: untrusted until passed through `sanitizeDraft()`. */
export interface WrittenDraft {
  title: string;
  excerpt: string;
  /** Markdown, without an H1 (the title is separate). */
  body: string;
  tags: string[];
}

/** The aspect ratios `generate_image` offers. */
export const ASPECT_RATIOS = ['1:1', '16:9', '4:3'] as const;

/** What `generate_image` asks an image provider for. `style` is the writer config's `image_style`. */
export interface ImageRequest {
  prompt: string;
  aspectRatio: (typeof ASPECT_RATIOS)[number];
  style?: string;
}

/** An encoded image; width and height are those of the encoded data. */
export interface GeneratedImage {
  data: Buffer;
  mimeType: 'image/png' | string;
  width: number;
  height: number;
}

/** Called with the fraction of the work done, from 0 to 1. */
export interface ProgressReporter {
  (fraction: number): void;
}

/** Writes article drafts. Rejects with the signal's reason when aborted, else with a {@link ProviderError}. */
export interface WriterProvider {
  readonly name: string;
  write(req: WriteRequest, signal: AbortSignal, progress: ProgressReporter): Promise<WrittenDraft>;
}

/** Generates images. Rejects with the signal's reason when aborted, else with a {@link ProviderError}. */
export interface ImageProvider {
  readonly name: string;
  generate(req: ImageRequest, signal: AbortSignal, progress: ProgressReporter): Promise<GeneratedImage>;
}

/**
 * A provider failed. The message is a sentence the calling model can act on;
 * `retryable` tells whether the same request may succeed later.
 */
export class ProviderError extends Error {
  override name = 'ProviderError';

  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
