// Preloaded with `node --import` before dist/src/main.js by bench/retention.bench.mjs: the retention
// purge starts on SIGUSR2 instead of its timer, and the next SIGUSR2 stops it after the batch in flight,
// so the bench can measure /mcp with and without it on one server and one database, in alternating
// rounds. The purge itself is the product's (its batch size and pause); only the trigger is patched.
import { RetentionService } from '../../dist/src/retention/retention.service.js';

RetentionService.prototype.onApplicationBootstrap = function onApplicationBootstrap() {
  let current = null;
  process.on('SIGUSR2', () => {
    if (current) {
      current.stop = true;
      return;
    }
    const run = { stop: false };
    current = run;
    this.purge({
      onBatch: () => {
        if (run.stop) throw new Error('stopped by the bench');
      },
    })
      .catch(() => undefined)
      .finally(() => {
        if (current === run) current = null;
      });
  });
};
