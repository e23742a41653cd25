import { Hono } from 'hono';
import type { Db } from '../db/db.js';
import { VERSION } from '../../version.js';

/**
 * The internal server: health, readiness (pings the database), version and, when telemetry metrics
 * are on, `/metrics` (Prometheus text); never on the public port.
 */
export function internalApp(db: Db, metrics?: () => Promise<string>): Hono {
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'healthy' }));
  app.get('/readiness', async (c) => {
    try {
      await Promise.race([db.ping(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 5000).unref())]);
      return c.json({ status: 'ready' });
    } catch {
      return c.json({ error: 'service not ready' }, 503);
    }
  });
  app.get('/version', (c) =>
    c.json({ version: VERSION, commit: 'unknown', build_date: 'unknown', go_version: `node ${process.version}`, platform: `${process.platform}/${process.arch}` }),
  );
  if (metrics) {
    app.get('/metrics', async (c) => c.body(await metrics(), 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }));
  }
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  return app;
}
