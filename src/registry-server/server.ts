import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { ErrorCodes, ThvError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { RegistryServerConfig } from './config.js';
import type { Db } from './db/db.js';
import { migrateUp } from './db/migrations.js';
import { openDatabase } from './db/open.js';
import { publicApp } from './api/app.js';
import { internalApp } from './api/internal.js';
import { loadAuthenticator, type Authenticator } from './api/auth.js';
import { reconcileConfig } from './store/reconcile.js';
import { SyncCoordinator } from './sync.js';
import { startRegistryTelemetry } from './telemetry.js';

/**
 * Wires one running registry service: database (migrated and reconciled with the config before any
 * request is answered, unlike the reference which races them), the sync coordinator, the public and
 * the internal server.
 */
export interface ServeOptions {
  config: RegistryServerConfig;
  logger: Logger;
  address?: string;
  internalAddress?: string;
  /** Use this database instead of opening one from the config (tests share one PGlite). */
  db?: Db;
  /** Upper bound between sync ticks (default 2 minutes). */
  maxTickMs?: number;
  /** Skip the background coordinator (tests drive `sync.tick()` themselves). */
  noSync?: boolean;
}

export interface RunningRegistry {
  url: string;
  internalUrl: string;
  db: Db;
  sync: SyncCoordinator;
  close(): Promise<void>;
}

/** `:8080` → 0.0.0.0:8080, `localhost:1` → 127.0.0.1:1 (spec §1 notes); anything else is an error. */
export function parseAddress(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  if (i < 0) throw new ThvError(ErrorCodes.InvalidArgument, `address must be host:port or :port: ${addr}`);
  let host = addr.slice(0, i);
  const portText = addr.slice(i + 1);
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) throw new ThvError(ErrorCodes.InvalidArgument, `address is not a valid port: ${addr}`);
  if (host === '') host = '0.0.0.0';
  if (host === 'localhost') host = '127.0.0.1';
  host = host.replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(portText) };
}

function listen(app: { fetch: (req: Request) => Response | Promise<Response> }, addr: string): Promise<{ server: ServerType; url: string }> {
  const { host, port } = parseAddress(addr);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
      const h = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({ server, url: `http://${h === '0.0.0.0' ? '127.0.0.1' : h}:${info.port}` });
    });
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ThvError(err.code === 'EADDRINUSE' ? ErrorCodes.AddressInUse : ErrorCodes.Internal, `cannot listen on ${addr}: ${err.message}`)),
    );
    // Slow or stuck clients must not hold sockets forever.
    const s = server as unknown as { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number };
    s.headersTimeout = 10_000;
    s.requestTimeout = 15_000;
    s.keepAliveTimeout = 60_000;
  });
}

function closeServer(s: ServerType): Promise<void> {
  return new Promise((resolve) => {
    (s as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    s.close(() => resolve());
  });
}

/** Migrations run as `migrationUser` when that differs from the app user (spec §2.4). */
async function migrateAsOwner(config: RegistryServerConfig, db: Db, logger: Logger): Promise<number[]> {
  const d = config.database;
  if (d.kind !== 'postgres' || d.migrationUser === d.user) return migrateUp(db);
  const mdb = await openDatabase(d, logger, 'migration');
  try {
    return await migrateUp(mdb);
  } finally {
    await mdb.close();
  }
}

export async function startRegistry(o: ServeOptions): Promise<RunningRegistry> {
  const { config, logger } = o;
  const address = o.address ?? ':8080';
  const internalAddress = o.internalAddress ?? ':8081';
  // Bad addresses are usage errors: say so before opening (or creating) any database.
  parseAddress(address);
  parseAddress(internalAddress);
  const db = o.db ?? (await openDatabase(config.database, logger));
  const ownDb = o.db === undefined;
  let authenticator: Authenticator | undefined;
  const opened: ServerType[] = [];
  const telemetry = startRegistryTelemetry(config.telemetry, logger);
  const sync = new SyncCoordinator({ db, logger, maxMetaSize: config.database.maxMetaSize, maxTickMs: o.maxTickMs, onSync: (...a) => telemetry.recordSync(...a) });
  try {
    const applied = await migrateAsOwner(config, db, logger);
    if (applied.length > 0) logger.info({ applied }, 'database migrated');
    await reconcileConfig(db, config);
    if (config.auth.mode === 'oauth') authenticator = await loadAuthenticator(config.auth, config.insecureUrl, logger);
    const pub = await listen(publicApp(config, db, authenticator, logger, telemetry.middleware), address);
    opened.push(pub.server);
    const internal = await listen(internalApp(db, telemetry.metrics), internalAddress);
    opened.push(internal.server);
    if (!o.noSync) sync.start();
    logger.info({ url: pub.url, internal: internal.url, database: db.kind, auth: config.auth.mode }, 'registry server started');
    return {
      url: pub.url,
      internalUrl: internal.url,
      db,
      sync,
      async close() {
        await sync.stop();
        await Promise.all(opened.map(closeServer));
        await authenticator?.close().catch(() => undefined);
        await telemetry.shutdown();
        if (ownDb) await db.close();
      },
    };
  } catch (err) {
    await sync.stop();
    await Promise.all(opened.map(closeServer));
    await authenticator?.close().catch(() => undefined);
    await telemetry.shutdown();
    if (ownDb) await db.close().catch(() => undefined);
    throw err;
  }
}
