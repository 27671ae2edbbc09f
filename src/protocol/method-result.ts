import type { Outcome } from '../activity/activity-entry.entity.js';
import type { SessionInfo } from '../mcp/sessions.service.js';

/**
 * What a JSON-RPC method answers and what its activity-log entry says of it: the one shape that goes
 * from the method table (and the tool dispatcher) to the responder. The method and the tool the entry
 * names come from the request itself (McpState).
 */
export interface MethodResult {
  /** The JSON-RPC `result`: a value, or JSON text already serialised; absent when the answer has no body. */
  result?: unknown;
  /** `ok` when absent. */
  outcome?: Outcome;
  /** The project a tool acted on. */
  projectId?: string | null;
  /** A session the request opened (initialize) or ended (DELETE): its entry's session instead of the one it was sent in. */
  session?: Pick<SessionInfo, 'id' | 'client'>;
  headers?: Record<string, string>;
}
