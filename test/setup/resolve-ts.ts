// Jest's moduleNameMapper does not apply to globalSetup/globalTeardown: map `./x.js` imports to `./x.ts` there.
import Module from 'node:module';

const mod = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const original = mod._resolveFilename;
mod._resolveFilename = function (request: string, ...rest: unknown[]) {
  try {
    return original.call(this, request, ...rest);
  } catch (err) {
    if (request.startsWith('.') && request.endsWith('.js')) return original.call(this, request.slice(0, -3), ...rest);
    throw err;
  }
};
