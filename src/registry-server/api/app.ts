import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../../logging.js';
import type { RegistryServerConfig } from '../config.js';
import type { Db } from '../db/db.js';
import { adminRoutes } from './admin.js';
import { authMiddleware, requireRole, type Authenticator, type AuthVars } from './auth.js';
import { ApiError } from './errors.js';
import { openApiDocument } from './openapi.js';
import { handleV01 } from './v01.js';

/**
 * The public server: security headers → body limit → authentication → routes. Every error is a JSON
 * body; anything unexpected is logged and answered 500 without details.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

export function publicApp(
  cfg: RegistryServerConfig,
  db: Db,
  authenticator: Authenticator | undefined,
  logger: Logger,
  telemetry?: MiddlewareHandler,
): Hono<{ Variables: AuthVars }> {
  const app = new Hono<{ Variables: AuthVars }>();
  const openapi = JSON.stringify(openApiDocument());

  // Outermost, so 401s, 413s and errors are measured too.
  if (telemetry) app.use('*', telemetry);

  // Set before the handler runs, so they are part of the response as it is built (no copy after).
  app.use('*', async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
    await next();
  });
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        // Read and discard the rest of the upload, so the client gets to read our answer instead of
        // a reset connection (the server's request timeout bounds how long this can take).
        (c.env as { incoming?: NodeJS.ReadableStream } | undefined)?.incoming?.resume();
        // ...and say the connection ends here, so no client reuses a socket we may still cut.
        return c.json({ error: `request body larger than ${MAX_BODY_BYTES} bytes` }, 413, { Connection: 'close' });
      },
    });
  app.use('*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limit(c, next)));

  // Public in every mode, and mounted before authentication.
  app.get('/openapi.json', (c) => c.body(openapi, 200, { 'Content-Type': 'application/json' }));
  if (cfg.auth.mode === 'oauth') {
    const meta = {
      resource: cfg.auth.oauth?.resourceUrl ?? '',
      authorization_servers: (cfg.auth.oauth?.providers ?? []).map((p) => p.issuerUrl),
      bearer_methods_supported: ['header'],
    };
    app.all('/.well-known/oauth-protected-resource', (c) => c.json(meta));
    app.all('/.well-known/oauth-protected-resource/*', (c) => c.json(meta));
  }

  app.use('*', authMiddleware(cfg.auth, authenticator, logger));

  app.get('/registry/*', async (c) => {
    const res = await handleV01(c, db, c.get('caller'));
    return res ?? c.json({ error: 'not found' }, 404);
  });
  app.route('/v1', adminRoutes(db, cfg.auth, cfg.database.maxMetaSize));
  void requireRole;

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) return c.json({ error: err.message }, err.status);
    logger.error({ err: (err as Error).message, path: new URL(c.req.url).pathname }, 'request failed');
    return c.json({ error: 'internal server error' }, 500);
  });
  return app;
}
