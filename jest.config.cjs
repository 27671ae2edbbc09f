/**
 * Jest runs the TypeScript sources as CommonJS through SWC; @nestjs/*, d3-* and the other packages below ship ES modules only, so they are transformed too.
 * @opentelemetry/* loads `http` and its resource detectors with import(), which CommonJS under Jest cannot do without SWC's rewrite.
 */
const swc = JSON.parse(require('node:fs').readFileSync(__dirname + '/.swcrc', 'utf8'));
const swcJs = { ...swc, jsc: { ...swc.jsc, parser: { syntax: 'ecmascript' } } };

// moduleNameMapper does not reach globalSetup/globalTeardown, which Jest requires in this process:
// resolve their `./x.js` imports to `./x.ts` here.
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  try {
    return resolve.call(this, request, ...rest);
  } catch (err) {
    if (request.startsWith('.') && request.endsWith('.js')) return resolve.call(this, request.slice(0, -3), ...rest);
    throw err;
  }
};

// The browser suites drive Debian's Chromium (test/support/browser.ts). Without it a newcomer's
// `npm test` leaves them out, saying so; under CI=true they run, and fail saying why.
const BROWSER_SUITES = ['<rootDir>/test/browser/', '-browser\\.e2e-spec\\.ts$'];
const chromiumMissing = (() => {
  try {
    require('node:fs').accessSync('/usr/bin/chromium', require('node:fs').constants.X_OK);
    return false;
  } catch {
    return true;
  }
})();
if (chromiumMissing && process.env.CI !== 'true') {
  console.warn(
    'Leaving out the browser suites (test/browser, test/**/*-browser.e2e-spec.ts): Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium; .ci/run does). With CI=true they run and fail instead.',
  );
}

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(chromiumMissing && process.env.CI !== 'true' ? BROWSER_SUITES : [])],
  transform: {
    '^.+\\.ts$': ['@swc/jest', swc],
    '^.+\\.m?js$': ['@swc/jest', swcJs],
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|uuid|openid-client|oauth4webapi|jose|oauth2-mock-server|is-plain-obj|d3-[a-z-]+|internmap|@opentelemetry)/)',
  ],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFiles: ['<rootDir>/test/setup/worker-database.ts'],
  testTimeout: 30000,
  // Each test file boots the whole app in a fresh module registry, and some of it stays reachable from
  // Node's shared state after the file ends: a worker replaced once it holds more than this after a
  // file keeps the heap far from V8's limit (a run in one process grew to ~4 GB and paused for GC).
  workerIdleMemoryLimit: '1GB',
};
