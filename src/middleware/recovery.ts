import type { Logger } from '../logging.js';
import type { NamedMiddleware } from './types.js';
import { sendJsonRpcError } from '../transport/http-util.js';
import { JSONRPC_INTERNAL_ERROR } from '../transport/jsonrpc.js';

/** Outermost stage: an unexpected error becomes a 500 with a JSON-RPC body, and the proxy stays up. */
export function recovery(logger: Logger): NamedMiddleware {
  return {
    name: 'recovery',
    async handle(ctx, next) {
      try {
        await next();
      } catch (err) {
        logger.error({ err: { message: (err as Error).message, stack: (err as Error).stack }, path: ctx.path }, 'request failed');
        if (!ctx.res.headersSent) {
          sendJsonRpcError(ctx.res, 500, ctx.mcp?.id ?? null, JSONRPC_INTERNAL_ERROR, 'Internal error');
        } else {
          ctx.res.destroy();
        }
      }
    },
  };
}
