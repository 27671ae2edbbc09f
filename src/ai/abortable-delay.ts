import type { ProgressReporter } from './ai.types.js';

/** Waits `ms`, rejecting at once with the signal's reason (an AbortError by default) when it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Spends `totalMs` in `steps` equal cancellable steps, reporting `i / steps` after each one,
 * so the job path (progress, cancellation) can be seen with the offline providers.
 */
export async function steppedDelay(totalMs: number, signal: AbortSignal, progress: ProgressReporter, steps = 10): Promise<void> {
  signal.throwIfAborted();
  if (totalMs <= 0) return;
  const count = Math.max(1, Math.min(steps, Math.floor(totalMs)));
  for (let i = 1; i <= count; i++) {
    // Spread the rounding over the steps so the total is exactly totalMs.
    await abortableSleep(Math.round((totalMs * i) / count) - Math.round((totalMs * (i - 1)) / count), signal);
    progress(i / count);
  }
}
