/**
 * JSON-RPC 2.0 shapes and the small amount of parsing the proxy needs. The proxy never re-encodes a
 * message it did not change: bodies and stdout lines travel as the bytes they arrived as.
 */
export type JsonRpcId = string | number;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: JsonRpcId | null;
  method?: string;
  params?: Record<string, unknown> | unknown[];
  result?: unknown;
  error?: JsonRpcError;
}

export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_INTERNAL_ERROR = -32603;
export const JSONRPC_SERVER_ERROR = -32000;
export const JSONRPC_SESSION_NOT_FOUND = -32001;

export function isValidId(id: unknown): id is JsonRpcId {
  return (typeof id === 'string' && id.length > 0) || (typeof id === 'number' && Number.isFinite(id));
}

export function classify(msg: unknown): MessageKind {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return 'invalid';
  const m = msg as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return 'invalid';
  if (typeof m.method === 'string') {
    if (!('id' in m) || m.id === undefined) return 'notification';
    return isValidId(m.id) ? 'request' : 'invalid';
  }
  if ('result' in m || 'error' in m) {
    return m.id === null || isValidId(m.id) ? 'response' : 'invalid';
  }
  return 'invalid';
}

/** The routing key of an id: numbers and strings never collide ("1" vs 1). */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}

/** True when the first non-whitespace byte opens a JSON array (a batch). */
export function isBatchBody(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x5b;
  }
  return false;
}

export function errorMessage(id: JsonRpcId | null | undefined, code: number, message: string, data?: unknown): JsonRpcMessage {
  const error: JsonRpcError = data === undefined ? { code, message } : { code, message, data };
  return id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}

export const BATCH_NOT_SUPPORTED =
  'JSON-RPC batch requests are not supported (batching was removed in MCP revision 2025-06-18)';
