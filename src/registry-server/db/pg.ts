import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db, Queryable } from './db.js';

export interface PgOptions {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
  sslMode?: string;
  maxOpenConns?: number;
  maxIdleConns?: number;
  connMaxLifetimeSeconds?: number;
  caPath?: string;
}

function sslFor(mode: string | undefined): pg.PoolConfig['ssl'] {
  switch (mode ?? 'require') {
    case 'disable':
      return false;
    case 'require':
      // libpq "require" encrypts without verifying the certificate.
      return { rejectUnauthorized: false };
    default:
      return { rejectUnauthorized: true };
  }
}

async function inTx<T>(client: pg.PoolClient, fn: (q: Queryable) => Promise<T>): Promise<T> {
  const q = queryableOf(client);
  await client.query('BEGIN');
  try {
    const out = await fn(q);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

const names = new Map<string, string>();
function statementName(sql: string): string {
  let n = names.get(sql);
  if (!n) {
    n = `thv_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    names.set(sql, n);
  }
  return n;
}

function queryableOf(c: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(sql: string, params?: unknown[], prepare?: boolean) {
      const r = prepare
        ? await c.query({ name: statementName(sql), text: sql, values: params as unknown[] })
        : await c.query(sql, params as unknown[]);
      return r.rows as T[];
    },
  };
}

export function openPostgres(o: PgOptions): Db {
  const pool = new pg.Pool({
    host: o.host,
    port: o.port,
    user: o.user,
    password: o.password,
    database: o.database,
    ssl: sslFor(o.sslMode),
    max: o.maxOpenConns ?? 10,
    min: o.maxIdleConns ?? 0,
    maxLifetimeSeconds: o.connMaxLifetimeSeconds ?? 0,
    connectionTimeoutMillis: 10_000,
    application_name: 'thv-registry-api',
  });
  // An idle client that loses its server (restart, network) must not crash the process.
  pool.on('error', () => undefined);
  const base = queryableOf(pool);
  return {
    kind: 'postgres',
    query: base.query,
    async tx(fn) {
      const client = await pool.connect();
      try {
        return await inTx(client, fn);
      } finally {
        client.release();
      }
    },
    async session(fn) {
      const client = await pool.connect();
      let broken = false;
      try {
        const q = queryableOf(client);
        return await fn({ query: q.query, tx: (f) => inTx(client, f) });
      } catch (err) {
        broken = true;
        throw err;
      } finally {
        // A session that failed may still hold locks: drop it rather than return it to the pool.
        client.release(broken ? true : undefined);
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}
