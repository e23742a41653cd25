import type { ServerResponse } from 'node:http';
import { errorMessage, type JsonRpcId } from './jsonrpc.js';

/** Small response writers shared by the proxies and the middlewares. */

export function sendText(res: ServerResponse, status: number, text: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendRawJson(res, status, JSON.stringify(body), headers);
}

export function sendRawJson(res: ServerResponse, status: number, json: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

/** A JSON-RPC error as an HTTP response. `id` undefined omits the member, as ToolHive does where no id is known. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  id: JsonRpcId | null | undefined,
  code: number,
  message: string,
  headers?: Record<string, string>,
): void {
  sendJson(res, status, errorMessage(id, code, message), headers);
}

/** True when an Accept header admits the media type (exact type, type/*, or * / *). */
export function accepts(accept: string | undefined, mediaType: string): boolean {
  if (accept === undefined || accept === '') return false;
  const [type] = mediaType.split('/');
  for (const part of accept.split(',')) {
    const range = part.split(';')[0]!.trim().toLowerCase();
    if (range === mediaType || range === '*/*' || range === `${type}/*`) return true;
  }
  return false;
}

/** Strips the query and fragment from a request URL without allocating a URL object. */
export function splitUrl(url: string | undefined): { path: string; query: string } {
  const u = url ?? '/';
  const q = u.indexOf('?');
  if (q < 0) return { path: u, query: '' };
  return { path: u.slice(0, q), query: u.slice(q + 1) };
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
