// Preloaded with `node --import` before dist/src/main.js by bench/activity.bench.mjs: the same server
// with the activity log switched off (record() answers at once, writes nothing), as the baseline the
// log's cost is measured against. The product has no such switch; only this bench patches it.
import { ActivityWriterService } from '../../dist/src/activity/activity-writer.service.js';

ActivityWriterService.prototype.record = function record() {
  return Promise.resolve();
};
