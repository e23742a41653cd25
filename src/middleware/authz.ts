import type { Logger } from '../logging.js';
import { AnnotationCache } from '../authz/annotations.js';
import type { CedarAuthorizer } from '../authz/engine.js';
import { filterListResult, routeMethod, type Caller, type ListKind } from '../authz/mcp.js';
import { sendRawJson, sendText } from '../transport/http-util.js';
import { JSONRPC_INTERNAL_ERROR, type JsonRpcId, type JsonRpcMessage } from '../transport/jsonrpc.js';
import type { MessageTransform, NamedMiddleware, ProxyContext } from './types.js';

/**
 * The `authz` stage: Cedar policies on every MCP request (ToolHive `pkg/authz/middleware.go`).
 *
 * - GET/DELETE and POSTs to `…/sse` pass; a POST without a parsed JSON-RPC request (a client's reply
 *   to a server request, or nothing parsed) → 400 `Invalid or malformed MCP request`.
 * - Methods are routed by src/authz/mcp.ts: always allowed, denied without policies, checked
 *   (tools/call, prompts/get, resources/read|subscribe|unsubscribe), or list responses filtered.
 * - Deny → 403 with ToolHive's JSON-RPC body `{"jsonrpc":"2.0","id":…,"error":{"code":403,"message":"Unauthorized"}}`.
 *   The reason goes to the debug log only.
 * - No identity (no auth stage ran) → deny.
 */

export const AUTHZ_STAGE = 'authz';

export interface AuthzStageOptions {
  authorizer: CedarAuthorizer;
  /** The workload name: resources get the parent `MCP::"<serverName>"`. */
  serverName: string;
  logger: Logger;
  /** Shared annotation cache; one per proxy by default. */
  annotations?: AnnotationCache;
}

const MALFORMED = 'Invalid or malformed MCP request\n';

export function authz(options: AuthzStageOptions): NamedMiddleware {
  const { authorizer, serverName, logger } = options;
  const annotations = options.annotations ?? new AnnotationCache();
  return {
    name: AUTHZ_STAGE,
    async handle(ctx, next) {
      if (ctx.req.method !== 'POST' || ctx.path.endsWith('/sse')) return next();
      const mcp = ctx.mcp;
      if (mcp === undefined || ctx.message === undefined || mcp.kind === 'response') {
        return sendText(ctx.res, 400, MALFORMED);
      }
      const route = routeMethod(mcp.method, ctx.message.params);
      if (route.kind === 'allow') return next();
      if (route.kind === 'deny') return forbid(ctx, logger, route.reason);
      const identity = ctx.identity;
      if (identity === undefined) return forbid(ctx, logger, 'no identity');
      const caller: Caller = { claims: identity.claims, localClaims: identity.token === undefined || identity.token === '', serverName };
      if (route.kind === 'list') {
        if (mcp.kind === 'request') {
          const cursor = (ctx.message.params as { cursor?: unknown } | undefined)?.cursor;
          ctx.responseTransforms.push(listTransform(authorizer, route.list, caller, annotations, cursor !== undefined && cursor !== null, logger));
        }
        return next();
      }
      const allowed = authorizer.authorize({
        claims: caller.claims,
        localClaims: caller.localClaims,
        action: route.action,
        resourceId: route.resourceId,
        arguments: route.arguments,
        annotations: route.action === 'call_tool' ? annotations.get(route.resourceId) : undefined,
        serverName,
      });
      if (!allowed) return forbid(ctx, logger, `${route.action} on ${route.resourceId} denied by policy`);
      return next();
    },
  };
}

function forbid(ctx: ProxyContext, logger: Logger, reason: string): void {
  logger.debug({ method: ctx.mcp?.method, reason }, 'authorization denied');
  const id = ctx.mcp?.id;
  // ToolHive echoes the id (numbers as integers) and omits it for notifications.
  const echo: JsonRpcId | undefined = typeof id === 'number' ? Math.trunc(id) : id;
  const body =
    echo === undefined
      ? '{"jsonrpc":"2.0","error":{"code":403,"message":"Unauthorized"}}'
      : `{"jsonrpc":"2.0","id":${JSON.stringify(echo)},"error":{"code":403,"message":"Unauthorized"}}`;
  sendRawJson(ctx.res, 403, body);
}

/**
 * Response side of a list request: learn annotations from the unfiltered tools/list, then keep only
 * the items the caller may use. Never throws and never passes an unchecked list: any failure becomes
 * a JSON-RPC internal error.
 */
function listTransform(
  authorizer: CedarAuthorizer,
  list: ListKind,
  caller: Caller,
  annotations: AnnotationCache,
  nextPage: boolean,
  logger: Logger,
): MessageTransform {
  return (message: JsonRpcMessage): JsonRpcMessage => {
    if (message.method !== undefined) return message; // a notification or server request streamed for this call
    const hasResult = message.result !== undefined && message.result !== null;
    if (message.error !== undefined) return hasResult ? internalError(message) : message;
    if (!hasResult) return message;
    try {
      const result = message.result;
      if (list === 'tools') {
        const tools = (result as { tools?: unknown } | null)?.tools;
        if (Array.isArray(tools)) annotations.learn(tools, nextPage);
      }
      const out = filterListResult(authorizer, list, result, caller);
      return out === result ? message : { ...message, result: out };
    } catch (err) {
      logger.warn({ list, err: (err as Error).message }, 'list filtering failed; answering with an internal error');
      return internalError(message);
    }
  };
}

function internalError(message: JsonRpcMessage): JsonRpcMessage {
  return { jsonrpc: '2.0', id: message.id ?? null, error: { code: JSONRPC_INTERNAL_ERROR, message: 'internal error' } };
}
