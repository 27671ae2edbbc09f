// Preloaded by bench/memory.bench.mjs (with --expose-gc): a full garbage collection on SIGUSR2, so the
// bench can read the live V8 heap after each half (RSS alone also counts garbage not yet collected
// and pages V8 has not given back). The product has no such hook; only this bench adds it.
process.on('SIGUSR2', () => globalThis.gc?.());
