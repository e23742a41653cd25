import type { CedarAuthorizer, Explanation } from './engine.js';
import { ANNOTATION_HINTS, type AuthzRequest, type CedarAction, type ToolAnnotations } from './request.js';

/**
 * Which MCP methods are checked, and how (ToolHive `pkg/authz/middleware.go` MCPMethodToFeatureOperation),
 * plus list filtering (`response_filter.go`). Shared by the proxy stage and `thv authz test|check`, so
 * both decide the same way.
 *
 * Fail-closed additions to ToolHive (issue 5): a checked method whose name / uri is missing or not a
 * string, params that are not an object, or arguments that are not an object, deny (ToolHive asks the
 * policies about `Tool::""`, or drops the arguments).
 */

export type Route =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  | { kind: 'check'; action: CedarAction; resourceId: string; arguments: Record<string, unknown> | undefined }
  | { kind: 'list'; list: ListKind };

export type ListKind = 'tools' | 'prompts' | 'resources';

const ALWAYS_ALLOWED = new Set([
  'ping',
  'initialize',
  'roots/list',
  'server/discover',
  'subscriptions/listen',
  'logging/setLevel',
  'completion/complete',
  'resources/templates/list',
  'features/list',
  'notifications/message',
  'notifications/initialized',
  'notifications/progress',
  'notifications/cancelled',
  'notifications/roots/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/tasks/status',
]);

const LISTS: Record<string, ListKind> = { 'tools/list': 'tools', 'prompts/list': 'prompts', 'resources/list': 'resources' };

export function routeMethod(method: string | undefined, params: unknown): Route {
  if (typeof method !== 'string') return { kind: 'deny', reason: 'malformed request: no method' };
  if (ALWAYS_ALLOWED.has(method)) return { kind: 'allow' };
  const list = LISTS[method];
  if (list !== undefined) return { kind: 'list', list };
  let action: CedarAction;
  let key: 'name' | 'uri';
  switch (method) {
    case 'tools/call':
      action = 'call_tool';
      key = 'name';
      break;
    case 'prompts/get':
      action = 'get_prompt';
      key = 'name';
      break;
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      action = 'read_resource';
      key = 'uri';
      break;
    default:
      // sampling/createMessage, elicitation/create, tasks/*, unknown methods: denied without policies.
      return { kind: 'deny', reason: `method ${JSON.stringify(method)} is not allowed` };
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    return { kind: 'deny', reason: `malformed request: ${method} needs params` };
  }
  const p = params as Record<string, unknown>;
  const id = p[key];
  if (typeof id !== 'string' || id === '') return { kind: 'deny', reason: `malformed request: params.${key} must be a non-empty string` };
  let args: Record<string, unknown> | undefined;
  if (action !== 'read_resource') {
    const a = p['arguments'];
    if (a !== undefined && a !== null) {
      if (typeof a !== 'object' || Array.isArray(a)) return { kind: 'deny', reason: 'malformed request: params.arguments must be an object' };
      args = a as Record<string, unknown>;
    }
  }
  return { kind: 'check', action, resourceId: id, arguments: args };
}

/** The caller, as the authorizer needs it. */
export interface Caller {
  claims: Record<string, unknown>;
  localClaims?: boolean;
  serverName: string;
}

/** Booleans among a tool's `annotations`; undefined when none is set. */
export function hintsOf(tool: unknown): ToolAnnotations | undefined {
  const a = (tool as { annotations?: unknown } | null)?.annotations;
  if (a === null || typeof a !== 'object') return undefined;
  let out: ToolAnnotations | undefined;
  for (const h of ANNOTATION_HINTS) {
    const v = (a as Record<string, unknown>)[h];
    if (typeof v === 'boolean') (out ??= {})[h] = v;
  }
  return out;
}

export interface ItemDecision {
  /** Tool / prompt name, or resource URI; undefined when the item has none (it is removed). */
  id: string | undefined;
  allowed: boolean;
  explanation?: Explanation;
}

/** The request the authorizer sees for one list item. */
export function itemRequest(list: ListKind, item: unknown, caller: Caller): AuthzRequest | undefined {
  const key = list === 'resources' ? 'uri' : 'name';
  const id = (item as Record<string, unknown> | null)?.[key];
  if (item === null || typeof item !== 'object' || typeof id !== 'string' || id === '') return undefined;
  const action: CedarAction = list === 'tools' ? 'call_tool' : list === 'prompts' ? 'get_prompt' : 'read_resource';
  return {
    claims: caller.claims,
    localClaims: caller.localClaims,
    action,
    resourceId: id,
    annotations: list === 'tools' ? hintsOf(item) : undefined,
    serverName: caller.serverName,
  };
}

export class ListFilterError extends Error {}

/**
 * Filters a list result item by item. Returns the same object when nothing was removed. Throws
 * ListFilterError when the result carries the list in a shape that cannot be checked (fail closed).
 * With `explain`, each item's engine explanation is collected (the test runner).
 */
export function filterListResult(
  authorizer: CedarAuthorizer,
  list: ListKind,
  result: unknown,
  caller: Caller,
  decisions?: ItemDecision[],
): unknown {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) throw new ListFilterError('list result is not an object');
  const items = (result as Record<string, unknown>)[list];
  if (items === undefined || items === null) return { ...(result as Record<string, unknown>), [list]: [] };
  if (!Array.isArray(items)) throw new ListFilterError(`result.${list} is not an array`);
  const kept: unknown[] = [];
  for (const item of items) {
    const req = itemRequest(list, item, caller);
    let allowed = false;
    let explanation: Explanation | undefined;
    if (req !== undefined) {
      if (decisions !== undefined) {
        explanation = authorizer.explain(req);
        allowed = explanation.decision === 'allow';
      } else {
        allowed = authorizer.authorize(req);
      }
    }
    decisions?.push({ id: req?.resourceId, allowed, ...(explanation ? { explanation } : {}) });
    if (allowed) kept.push(item);
  }
  if (kept.length === items.length) return result;
  return { ...(result as Record<string, unknown>), [list]: kept };
}
