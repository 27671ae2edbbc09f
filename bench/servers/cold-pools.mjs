// Preloaded with `node --import` before dist/src/main.js by bench/quiet.bench.mjs: the same server whose
// PostgreSQL pools keep no connection open when unused (every pool as if its `min` were 0, pg-pool's
// default), as the baseline the warm connections are measured against. The product has no such switch;
// only this bench patches it (pg-pool's own test of whether a pool holds more connections than it keeps).
import pg from 'pg';

pg.Pool.prototype._isAboveMin = function _isAboveMin() {
  return this._clients.length > 0;
};
