/** Injection token of the configured `WriterProvider`; its drafts come out sanitized. */
export const WRITER_PROVIDER = Symbol('WRITER_PROVIDER');

/** Injection token of the configured `ImageProvider`. */
export const IMAGE_PROVIDER = Symbol('IMAGE_PROVIDER');
