import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable } from './db.js';

/**
 * The embedded store: PostgreSQL compiled to WebAssembly, in one process, persisted to `dataDir`
 * (or memory when `dataDir` is `memory://`). One connection: PGlite serialises every query, so a
 * transaction holds the whole database until it ends (the sync writer keeps its transaction short
 * and fetches outside it).
 */
export async function openPglite(dataDir: string): Promise<Db> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  const q: Queryable = {
    async query<T>(sql: string, params?: unknown[]) {
      const r = await db.query(sql, params);
      return r.rows as T[];
    },
  };
  const tx = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
    db.transaction(async (t) =>
      fn({
        async query<U>(sql: string, params?: unknown[]) {
          const r = await t.query(sql, params);
          return r.rows as U[];
        },
      }),
    );
  return {
    kind: 'pglite',
    query: q.query,
    tx,
    session: (fn) => fn({ query: q.query, tx }),
    async exec(sql) {
      await db.exec(sql);
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async close() {
      await db.close();
    },
  };
}
