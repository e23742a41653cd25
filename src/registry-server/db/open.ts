import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, ThvError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import type { DatabaseConfig } from '../config.js';
import type { Db } from './db.js';
import { openPostgres } from './pg.js';
import { openPglite } from './pglite.js';

/** A password from PGPASSFILE / ~/.pgpass (host:port:db:user:password, `*` wildcards). */
export function pgpassPassword(host: string, port: number, database: string, user: string, env = process.env): string | undefined {
  const file = env.PGPASSFILE || join(env.HOME || homedir(), '.pgpass');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const f = line.split(/(?<!\\):/).map((x) => x.replace(/\\(.)/g, '$1'));
    if (f.length < 5) continue;
    const ok = (v: string, want: string) => v === '*' || v === want;
    if (ok(f[0]!, host) && ok(f[1]!, String(port)) && ok(f[2]!, database) && ok(f[3]!, user)) return f.slice(4).join(':');
  }
  return undefined;
}

export async function openDatabase(cfg: DatabaseConfig, logger: Logger, as: 'app' | 'migration' = 'app'): Promise<Db> {
  if (cfg.kind === 'pglite') {
    const started = Date.now();
    try {
      const db = await openPglite(cfg.dataDir);
      logger.info({ dataDir: cfg.dataDir, ms: Date.now() - started }, 'embedded database (PGlite) opened');
      return db;
    } catch (err) {
      throw new ThvError(ErrorCodes.Internal, `cannot open the embedded database in ${cfg.dataDir}: ${(err as Error).message}`);
    }
  }
  const user = as === 'migration' ? cfg.migrationUser : cfg.user;
  const password =
    (as === 'migration' ? cfg.migrationPassword : cfg.password) ??
    process.env.THV_REGISTRY_DATABASE_PASSWORD ??
    pgpassPassword(cfg.host, cfg.port, cfg.database, user);
  const db = openPostgres({
    host: cfg.host,
    port: cfg.port,
    user,
    password,
    database: cfg.database,
    sslMode: cfg.sslMode,
    maxOpenConns: cfg.maxOpenConns,
    maxIdleConns: cfg.maxIdleConns,
    connMaxLifetimeSeconds: cfg.connMaxLifetimeMs !== undefined ? Math.round(cfg.connMaxLifetimeMs / 1000) : undefined,
  });
  try {
    await db.ping();
  } catch (err) {
    await db.close().catch(() => undefined);
    throw new ThvError(ErrorCodes.Internal, `cannot connect to PostgreSQL at ${cfg.host}:${cfg.port} as ${user}: ${(err as Error).message}`);
  }
  return db;
}
