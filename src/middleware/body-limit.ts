import type { NamedMiddleware, ProxyContext } from './types.js';
import { sendJsonRpcError } from '../transport/http-util.js';
import { JSONRPC_INVALID_REQUEST } from '../transport/jsonrpc.js';

export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Reads the request body once, refusing more than `maxBytes` with 413. ToolHive answers 413 with a text
 * body; we answer with a JSON-RPC error so that MCP clients can show it (deliberate difference).
 */
export function bodyLimit(maxBytes: number = DEFAULT_MAX_BODY_BYTES): NamedMiddleware {
  const tooLarge = `Request body too large: the limit is ${maxBytes} bytes`;
  return {
    name: 'body-limit',
    async handle(ctx, next) {
      const { req } = ctx;
      if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) return reject(ctx, tooLarge);
      const body = await readBody(ctx, maxBytes);
      if (body === undefined) return reject(ctx, tooLarge);
      ctx.body = body;
      return next();
    },
  };
}

/** Past this much discarded upload the connection is cut rather than drained. */
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

function reject(ctx: ProxyContext, message: string): void {
  sendJsonRpcError(ctx.res, 413, undefined, JSONRPC_INVALID_REQUEST, message);
  // Drain (and drop) the rest of the upload so that the client gets to read the 413 instead of a reset
  // connection; a client that keeps sending far past the limit is cut off.
  const { req } = ctx;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARD_BYTES) req.destroy();
  });
  req.resume();
}

function readBody(ctx: ProxyContext, maxBytes: number): Promise<Buffer | undefined> {
  const { req } = ctx;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
