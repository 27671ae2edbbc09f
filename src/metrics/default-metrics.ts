import perfHooks, { type IntervalHistogram, type PerformanceObserverCallback } from 'node:perf_hooks';
import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * prom-client's default metrics (`<prefix>process_*`, `<prefix>nodejs_*`) in `register`, and the function that stops them.
 *
 * collectDefaultMetrics starts a GC PerformanceObserver and an event-loop-delay histogram and returns nothing to stop
 * them with (prometheus/client_js#494, #500). Node keeps every connected observer in its own list, so the observer's
 * callback, and through it everything its module could reach, lives as long as the process: in a Jest run, where the
 * `perf_hooks` module is shared by the test files, that is each test file's whole module graph (about 30 MB a file);
 * the histogram's timer, never disabled, samples the event loop for every app ever booted.
 * prom-client looks both up on the `perf_hooks` module when called, so they are caught here as it makes them.
 */
export function collectStoppableDefaultMetrics(register: Registry, prefix: string): () => void {
  const histograms: IntervalHistogram[] = [];
  const observers: InstanceType<typeof perfHooks.PerformanceObserver>[] = [];
  const { monitorEventLoopDelay, PerformanceObserver } = perfHooks;
  perfHooks.monitorEventLoopDelay = (options) => {
    const histogram = monitorEventLoopDelay(options);
    histograms.push(histogram);
    return histogram;
  };
  perfHooks.PerformanceObserver = class extends PerformanceObserver {
    constructor(callback: PerformanceObserverCallback) {
      super(callback);
      observers.push(this);
    }
  };
  try {
    collectDefaultMetrics({ register, prefix });
  } finally {
    perfHooks.monitorEventLoopDelay = monitorEventLoopDelay;
    perfHooks.PerformanceObserver = PerformanceObserver;
  }
  return () => {
    for (const histogram of histograms.splice(0)) histogram.disable();
    for (const observer of observers.splice(0)) observer.disconnect();
  };
}
