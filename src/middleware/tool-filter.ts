import type { MessageTransform, NamedMiddleware, ProxyContext } from './types.js';
import { accepts, firstHeader, sendRawJson } from '../transport/http-util.js';
import { JSONRPC_INVALID_PARAMS, type JsonRpcId, type JsonRpcMessage } from '../transport/jsonrpc.js';

/**
 * Tool filtering and renaming: ToolHive's `tool-filter` (response side, `tools/list`) and
 * `tool-call-filter` (request side, `tools/call`) in one stage (`pkg/mcp/tool_filter.go`).
 *
 * Names: the server knows a tool by its ACTUAL name; the client sees the CLIENT-VISIBLE name, which is
 * the override's `name` when there is one, else the actual name. The filter list (`--tools`) is written
 * in client-visible names (spec quirk 13), and each entry is one literal name (quirk 14: `--tools a,b`
 * is the single tool `a,b`; nothing here splits on commas).
 *
 * Deliberate differences from ToolHive, each marked DIFF below:
 * - A `tools/call` without params / name answers 400 with a JSON-RPC error body (ToolHive: empty body).
 * - Params given as an array are treated like missing params (ToolHive's decoder fails on them and lets
 *   the request through unchecked).
 * - Only responses to this request's `tools/list` are rewritten (ToolHive sniffs every response body for
 *   `result.tools`). A tool entry without a string name is kept only when no filter is set (ToolHive
 *   fails the whole response, which the client then receives empty).
 * - A rewritten tool keeps all of its own fields. Current ToolHive rebuilds each listed tool from the
 *   first server tool that matches its client-visible name, so when an override renames a tool onto the
 *   name of another tool, both entries carry the other tool's schema.
 */

export interface ToolOverride {
  /** Client-visible name; empty or absent keeps the actual name. */
  name?: string;
  /** Client-visible description; empty or absent keeps the server's description. */
  description?: string;
}

export interface ToolFilterOptions {
  /** Client-visible names that are allowed. Empty or absent: every tool is allowed. */
  filterTools?: string[];
  /** Keyed by the ACTUAL tool name. */
  toolsOverride?: Record<string, ToolOverride>;
}

export const TOOL_FILTER_STAGE = 'tool-filter';

const TOOL_NOT_FOUND = 'tool not found';
const NAME_REQUIRED = 'Invalid params: tool name is required';

interface Rename {
  name: string | undefined;
  description: string | undefined;
}

/**
 * Builds the stage, or returns undefined when there is nothing to filter or rename (the chain then
 * omits it). Throws a TypeError on entries ToolHive's factory rejects: an empty filter name, an empty
 * actual name, or an override with neither name nor description.
 */
export function toolFilter(options: ToolFilterOptions): NamedMiddleware | undefined {
  const filterList = options.filterTools ?? [];
  const overrides = options.toolsOverride ?? {};
  const overrideKeys = Object.keys(overrides);
  if (filterList.length === 0 && overrideKeys.length === 0) return undefined;

  /** Client-visible names allowed; undefined = no filter. */
  let allowed: Set<string> | undefined;
  if (filterList.length > 0) {
    for (const name of filterList) {
      if (typeof name !== 'string' || name === '') throw new TypeError('tool filter: tool name cannot be empty');
    }
    allowed = new Set(filterList);
  }
  /** actual name -> override (tools/list). */
  const byActual = new Map<string, Rename>();
  /** client-visible (new) name -> actual name (tools/call). */
  const byVisible = new Map<string, string>();
  for (const actual of overrideKeys) {
    const entry = overrides[actual];
    if (actual === '') throw new TypeError('tool filter: tool name cannot be empty');
    const name = typeof entry?.name === 'string' && entry.name !== '' ? entry.name : undefined;
    const description = typeof entry?.description === 'string' && entry.description !== '' ? entry.description : undefined;
    if (name === undefined && description === undefined) {
      throw new TypeError(`tool filter: override for "${actual}": name and description cannot both be empty`);
    }
    byActual.set(actual, { name, description });
    // A description-only override does not change routing (ToolHive keys it by "", which no valid call uses).
    if (name !== undefined) byVisible.set(name, actual);
  }

  const transform = makeListTransform(allowed, byActual);

  return {
    name: TOOL_FILTER_STAGE,
    async handle(ctx, next) {
      const method = ctx.mcp?.method;
      if (method === 'tools/call') {
        if (!checkCall(ctx, allowed, byVisible)) return;
      } else if (method === 'tools/list' && ctx.mcp?.kind === 'request') {
        ctx.responseTransforms.push(transform);
      }
      return next();
    },
  };
}

/**
 * Request side. Returns false when it answered the request itself.
 *
 * Routing of a name, as ToolHive does it: (1) the name must be in the filter (when one is set);
 * (2) when it is some override's new name it is rewritten to that tool's actual name; (3) otherwise it
 * is forwarded unchanged. So the ACTUAL name of a renamed tool is still callable when no filter is set
 * (or when the filter happens to list the actual name): ToolHive lets it through, and so do we. With a
 * filter in client-visible names, the actual name is not in it and the call gets "tool not found".
 */
function checkCall(ctx: ProxyContext, allowed: Set<string> | undefined, byVisible: Map<string, string>): boolean {
  const message = ctx.message;
  if (message === undefined) return true;
  const params = message.params;
  const name =
    params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>).name : undefined;
  if (typeof name !== 'string' || name === '') {
    // DIFF: ToolHive answers 400 with an empty body. A JSON-RPC body lets the client show a reason.
    rejectCall(ctx, 400, message.id, NAME_REQUIRED);
    return false;
  }
  if (allowed !== undefined && !allowed.has(name)) {
    // Quirk 13: a filtered tool looks like a tool that does not exist: 200 + JSON-RPC error when the
    // client reads JSON, else 400 with the same body.
    const accept = firstHeader(ctx.req.headers.accept);
    const json = accept === undefined || accept.trim() === '' || accepts(accept, 'application/json');
    rejectCall(ctx, json ? 200 : 400, message.id, TOOL_NOT_FOUND);
    return false;
  }
  if (byVisible.size === 0) return true;
  const actual = byVisible.get(name);
  if (actual === undefined || actual === name) return true;
  // Renamed tool: forward the call under the name the server knows. A new object, so that whoever else
  // holds the parsed message (audit logs the client's view) is not affected.
  const newParams = { ...(params as Record<string, unknown>), name: actual };
  ctx.message = { ...message, params: newParams };
  ctx.messageChanged = true;
  if (ctx.mcp !== undefined) {
    ctx.mcp.params = newParams;
    ctx.mcp.resourceId = actual;
  }
  return true;
}

function rejectCall(ctx: ProxyContext, status: number, id: JsonRpcId | null | undefined, message: string): void {
  // Member order as ToolHive writes it: jsonrpc, error, id. A missing id (a tools/call notification)
  // is written as null.
  const body = `{"jsonrpc":"2.0","error":{"code":${JSONRPC_INVALID_PARAMS},"message":${JSON.stringify(message)}},"id":${JSON.stringify(id ?? null)}}`;
  ctx.answerJson = body;
  sendRawJson(ctx.res, status, body);
}

/**
 * Response side: one closure per stage, shared by all requests. Never mutates its input (the same
 * server message object may be delivered to several places); returns the input itself when nothing
 * changed, so the transport can forward the original bytes.
 */
function makeListTransform(allowed: Set<string> | undefined, byActual: Map<string, Rename>): MessageTransform {
  return (message: JsonRpcMessage): JsonRpcMessage => {
    const result = message.result;
    if (result === null || typeof result !== 'object' || Array.isArray(result)) return message;
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return message;
    let changed = false;
    const out: unknown[] = [];
    for (const tool of tools) {
      const actual = tool !== null && typeof tool === 'object' ? (tool as { name?: unknown }).name : undefined;
      if (typeof actual !== 'string' || actual === '') {
        // DIFF: ToolHive fails the whole response on a nameless tool. A filter cannot name it, so it
        // is dropped when a filter is set and passed through untouched otherwise.
        if (allowed === undefined) out.push(tool);
        else changed = true;
        continue;
      }
      const rename = byActual.get(actual);
      const visible = rename?.name ?? actual;
      if (allowed !== undefined && !allowed.has(visible)) {
        changed = true;
        continue;
      }
      if (rename === undefined) {
        out.push(tool);
        continue;
      }
      const copy: Record<string, unknown> = { ...(tool as Record<string, unknown>) };
      if (rename.name !== undefined) copy.name = rename.name;
      if (rename.description !== undefined) copy.description = rename.description;
      out.push(copy);
      changed = true;
    }
    if (!changed) return message;
    return { ...message, result: { ...(result as Record<string, unknown>), tools: out } };
  };
}
