import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Response } from 'express';
import { context } from '@opentelemetry/api';
import getRawBody from 'raw-body';
import { tracingOn } from '../common/telemetry.js';
import { errorBody, RpcCode, type RequestId } from '../protocol/json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { startMcpSpan } from './mcp-span.js';

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads and parses the body of a POST /mcp before any guard runs: the size limit answers first
 * (413), and every later refusal can carry the request's id and be recorded under the method it
 * names. Errors of the body itself are kept and answered after the credential is known, so they
 * are recorded in the activity log.
 */
@Injectable()
export class McpBodyMiddleware implements NestMiddleware {
  async use(req: McpRequest, res: Response, next: NextFunction): Promise<void> {
    if (req.method !== 'POST') {
      req.mcp = { startedAt: performance.now(), id: null, method: req.method };
      return tracingOn() ? context.with(startMcpSpan(req), next) : next();
    }
    req.mcp = { startedAt: performance.now(), id: null };
    let raw: Buffer;
    try {
      raw = await getRawBody(req, { limit: MAX_BODY_BYTES, length: req.headers['content-length'] });
    } catch (err) {
      const status = (err as { status?: number }).status ?? 400;
      const message = status === 413 ? 'The request body is larger than 1 MiB.' : 'The request body could not be read.';
      // Unread bytes of a refused upload are not worth keeping the socket for (set before sending: headers go out with the body).
      if (status === 413) res.setHeader('Connection', 'close');
      res
        .status(status)
        .type('application/json')
        .send(errorBody(null, status === 413 ? RpcCode.InvalidRequest : RpcCode.ParseError, message));
      return;
    }
    parse(req, raw);
    // The rest of the request is served inside its span (its SQL statements, jobs and calls become its children).
    if (tracingOn()) context.with(startMcpSpan(req), next);
    else next();
  }
}

function parse(req: McpRequest, raw: Buffer): void {
  const state = req.mcp;
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    state.parseError = { code: RpcCode.ParseError, message: 'Parse error: the body is not valid UTF-8.', status: 400 };
    return;
  }
  try {
    state.message = JSON.parse(text);
  } catch {
    state.parseError = { code: RpcCode.ParseError, message: 'Parse error: the body is not valid JSON.', status: 400 };
    return;
  }
  const message = state.message as { id?: unknown; method?: unknown; params?: { name?: unknown } };
  if (message && typeof message === 'object' && !Array.isArray(message)) {
    if (isId(message.id)) state.id = message.id;
    if (typeof message.method === 'string') state.method = message.method;
    const tool = state.method === 'tools/call' ? message.params?.name : undefined;
    if (typeof tool === 'string') state.tool = tool.slice(0, 100);
  }
  if (depth(state.message, 0) > MAX_DEPTH) {
    state.parseError = { code: RpcCode.InvalidRequest, message: `Invalid request: JSON nested deeper than ${MAX_DEPTH} levels.`, status: 400 };
  }
}

function isId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) || id === null;
}

/** Depth of nested arrays/objects, stopping as soon as the limit is passed. */
function depth(value: unknown, level: number): number {
  if (level > MAX_DEPTH || value === null || typeof value !== 'object') return level;
  let max = level + 1;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    max = Math.max(max, depth(child, level + 1));
    if (max > MAX_DEPTH) break;
  }
  return max;
}
