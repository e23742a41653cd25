import type { McpCall, NamedMiddleware } from './types.js';
import { sendJsonRpcError, firstHeader } from '../transport/http-util.js';
import {
  BATCH_NOT_SUPPORTED,
  classify,
  isBatchBody,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_PARSE_ERROR,
  type JsonRpcMessage,
} from '../transport/jsonrpc.js';

/**
 * Parses a POSTed JSON-RPC message once, so that every later stage reads `ctx.message` / `ctx.mcp`
 * instead of the bytes. Rejects what no MCP server should see: other content types, batches,
 * unparsable JSON and messages that are not JSON-RPC 2.0.
 */
export function mcpParse(): NamedMiddleware {
  return {
    name: 'mcp-parse',
    async handle(ctx, next) {
      if (ctx.req.method !== 'POST' || ctx.body === undefined) return next();
      const contentType = firstHeader(ctx.req.headers['content-type']);
      if (contentType === undefined || !/^application\/json\b/i.test(contentType.trim())) {
        return sendJsonRpcError(ctx.res, 415, null, JSONRPC_INVALID_REQUEST, 'Unsupported Media Type: Content-Type must be application/json');
      }
      const body = ctx.body;
      if (isBatchBody(body)) {
        return sendJsonRpcError(ctx.res, 400, undefined, JSONRPC_INVALID_REQUEST, BATCH_NOT_SUPPORTED);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch (err) {
        return sendJsonRpcError(ctx.res, 400, null, JSONRPC_PARSE_ERROR, `Parse error: ${(err as Error).message}`);
      }
      const kind = classify(parsed);
      if (kind === 'invalid') {
        const id = (parsed as { id?: unknown } | null)?.id;
        const echo = typeof id === 'string' || typeof id === 'number' ? id : null;
        return sendJsonRpcError(ctx.res, 400, echo, JSONRPC_INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message');
      }
      const message = parsed as JsonRpcMessage;
      ctx.message = message;
      ctx.mcp = describeMcpCall(message, kind);
      return next();
    },
  };
}

/** The facts later stages read from a parsed message (also used again after a webhook rewrote it). */
export function describeMcpCall(message: JsonRpcMessage, kind: 'request' | 'notification' | 'response'): McpCall {
  const params =
    message.params !== null && typeof message.params === 'object' && !Array.isArray(message.params)
      ? message.params
      : undefined;
  let resourceId: string | undefined;
  let args: Record<string, unknown> | undefined;
  switch (message.method) {
    case 'tools/call':
    case 'prompts/get':
      resourceId = typeof params?.name === 'string' ? params.name : undefined;
      args = isRecord(params?.arguments) ? params.arguments : undefined;
      break;
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      resourceId = typeof params?.uri === 'string' ? params.uri : undefined;
      break;
    case 'initialize': {
      const info = params?.clientInfo;
      resourceId = isRecord(info) && typeof info.name === 'string' ? info.name : undefined;
      break;
    }
  }
  return {
    kind,
    method: message.method,
    id: message.id ?? undefined,
    params,
    resourceId,
    arguments: args,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
