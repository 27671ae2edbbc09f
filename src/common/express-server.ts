import type { Express, Request, Response } from 'express';
import { IncomingMessage, ServerResponse, type ServerOptions } from 'node:http';

/**
 * The HTTP server options under which `app`'s requests and responses are Express's own from the start:
 * instances of subclasses of Node's `IncomingMessage` and `ServerResponse` whose prototypes become the
 * app's `request` and `response` (Express's methods, then Node's; `req.app` as before).
 *
 * Express's `app.handle` gives every request and response it is given those prototypes with
 * `Object.setPrototypeOf`. Made with them already, nothing changes there; changed per request, V8 gives
 * both objects new hidden classes, and every property access after it (Node's, Express's, ours) meets
 * shapes it has not seen. For a bare Express answer that cost 74 µs of CPU per request against 16 µs
 * under Node 20, and 17 against 15 under Node 24 (`npm run bench:express`, bench/README.md).
 */
export function expressServerOptions(app: Express): ServerOptions {
  const request = subclassWith(IncomingMessage, app.request);
  const response = subclassWith(ServerResponse, app.response);
  app.request = request.prototype as unknown as Request;
  app.response = response.prototype as unknown as Response;
  return { IncomingMessage: request, ServerResponse: response };
}

/** A subclass of `base` whose prototype is a copy of `prototype` (an object inheriting from `base.prototype`). */
function subclassWith<T extends new (...args: any[]) => object>(base: T, prototype: object): T {
  const made = class extends base {};
  Object.setPrototypeOf(made.prototype, Object.getPrototypeOf(prototype));
  Object.defineProperties(made.prototype, Object.getOwnPropertyDescriptors(prototype));
  return made;
}
