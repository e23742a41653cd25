import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcId, JsonRpcMessage } from '../transport/jsonrpc.js';

import type { Identity } from '../auth/identity.js';

/** Who is calling (defined by src/auth, which must not import middleware). */
export type { Identity };

/** Facts about the MCP call, read once by the mcp-parse stage. */
export interface McpCall {
  kind: 'request' | 'notification' | 'response';
  method: string | undefined;
  id: JsonRpcId | undefined;
  params: Record<string, unknown> | undefined;
  /** tools/call and prompts/get: params.name; resources/*: params.uri; initialize: clientInfo.name. */
  resourceId: string | undefined;
  /** tools/call and prompts/get: params.arguments. */
  arguments: Record<string, unknown> | undefined;
}

/**
 * Changes a server-to-client message that belongs to this request (its response, or a message streamed
 * for it) on the way back out. Returns the message to deliver (the same object when nothing changed).
 */
export type MessageTransform = (message: JsonRpcMessage) => JsonRpcMessage;

export interface ProxyContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Request path without the query string. */
  readonly path: string;
  /** Raw query string without '?', or ''. */
  readonly query: string;
  /** `performance.now()` when the request reached the chain; the stages that time requests share it. */
  readonly startedAt: number;
  /** The request body (POST), read once by the body-limit stage. */
  body: Buffer | undefined;
  /** The JSON-RPC message of a POST body, set by the mcp-parse stage. */
  message: JsonRpcMessage | undefined;
  mcp: McpCall | undefined;
  /**
   * Set by a stage that changed `message`. The transport then serialises `message` instead of forwarding
   * `body` untouched.
   */
  messageChanged: boolean;
  identity: Identity | undefined;
  /**
   * The JSON body of the answer when it was sent whole in one piece, set by whoever sent it (the stdio
   * bridge, the tool filter): stages that look at the answer read it here instead of watching writes.
   */
  answerJson: string | undefined;
  /**
   * Applied to each server message answering this request. They run in reverse order of registration:
   * the innermost stage first, as a response travels back out through the chain.
   */
  readonly responseTransforms: MessageTransform[];
  /** Per-request values owned by a stage (keyed by the stage's name). */
  readonly locals: Map<string, unknown>;
}

export type Next = () => Promise<void>;

/** A stage of the request chain. It either answers (and does not call next) or calls next once. */
export type Middleware = (ctx: ProxyContext, next: Next) => Promise<void>;

export interface NamedMiddleware {
  /** Stable name, as documented in docs/middleware.md and used in logs. */
  name: string;
  handle: Middleware;
}
