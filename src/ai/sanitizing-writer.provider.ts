import type { ProgressReporter, WriteRequest, WriterProvider, WrittenDraft } from './ai.types.js';
import { sanitizeDraft } from './sanitize.js';

/** Wraps a writer so that every draft it returns has been through {@link sanitizeDraft}. */
export class SanitizingWriterProvider implements WriterProvider {
  constructor(private readonly inner: WriterProvider) {}

  get name(): string {
    return this.inner.name;
  }

  async write(req: WriteRequest, signal: AbortSignal, progress: ProgressReporter): Promise<WrittenDraft> {
    return sanitizeDraft(await this.inner.write(req, signal, progress));
  }
}
