import { gateVisible, type Caller, type Claims } from '../claims.js';
import type { Queryable } from '../db/db.js';

/**
 * The consumer read path (MCP Registry v0.1). Rows come ordered by (name, source position, version)
 * from an index walk on entry_version(name, version), so a page costs about `limit` rows whatever
 * the registry's size. Per-entry claims are checked on the streamed rows; for each name only the
 * highest-priority source the caller can see is served (the reference picked the source of the
 * first row in version order — a quirk we fix).
 */
export interface VersionRow {
  name: string;
  version: string;
  /** The server JSON as stored, as text: passed through to the answer without a parse/stringify. */
  server: string;
  is_latest: boolean;
  created_at: Date;
  updated_at: Date;
  claims: Claims | null;
  position: number;
}

export interface RegistryRow {
  id: string;
  name: string;
  claims: Claims | null;
}

export class CursorError extends Error {}

export interface Cursor {
  name: string;
  position: number;
  version: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.name, c.position, c.version]), 'utf8').toString('base64url');
}

export function decodeCursor(text: string): Cursor {
  if (text.length > 2048 || !/^[A-Za-z0-9_-]+={0,2}$/.test(text)) throw new CursorError('invalid cursor');
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new CursorError('invalid cursor');
  }
  if (!Array.isArray(v) || v.length !== 3 || typeof v[0] !== 'string' || !Number.isInteger(v[1]) || typeof v[2] !== 'string')
    throw new CursorError('invalid cursor');
  return { name: v[0], position: v[1], version: v[2] };
}

export async function findRegistry(q: Queryable, name: string): Promise<RegistryRow | undefined> {
  const rows = await q.query<RegistryRow>(`SELECT id, name, claims FROM registry WHERE name = $1`, [name], true);
  return rows[0];
}

export interface ListOptions {
  limit: number;
  cursor?: Cursor;
  search?: string;
  updatedSince?: Date;
  version?: string;
}

const COLUMNS = `ev.name, ev.version, ev.server::text AS server, ev.is_latest, ev.created_at, ev.updated_at, re.claims, rs.position`;

/** Escapes LIKE wildcards so `search=50%` means the text "50%". */
function likePattern(s: string): string {
  return `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The SQL behind one page: the registry row (by name) LEFT JOIN LATERAL the page of its rows, so one
 * round trip answers "does the registry exist, what are its claims, and what is on the page". Also
 * what the benchmark measures as the bare query.
 */
export function listSql(o: ListOptions, registryName: string, batch: number, after: Cursor | undefined): { sql: string; params: unknown[] } {
  const params: unknown[] = [registryName];
  const where = ['rs.registry_id = r.id'];
  if (after) {
    params.push(after.name, after.position, after.version);
    // The redundant `ev.name >= $2` lets the planner start the index walk at the cursor.
    where.push(`ev.name >= $2 AND (ev.name, rs.position, ev.version) > ($2, $3, $4)`);
  }
  if (o.version === 'latest') where.push('ev.is_latest');
  else if (o.version !== undefined) {
    params.push(o.version);
    where.push(`ev.version = $${params.length}`);
  }
  if (o.updatedSince) {
    params.push(o.updatedSince);
    where.push(`ev.updated_at > $${params.length}`);
  }
  if (o.search) {
    params.push(likePattern(o.search));
    const p = `$${params.length}`;
    where.push(`(lower(ev.name) LIKE ${p} ESCAPE '\\' OR lower(ev.title) LIKE ${p} ESCAPE '\\' OR lower(ev.description) LIKE ${p} ESCAPE '\\')`);
  }
  params.push(batch);
  const sql = `SELECT r.id AS registry_id, r.claims AS registry_claims, x.*
    FROM registry r LEFT JOIN LATERAL (
      SELECT ${COLUMNS}
        FROM entry_version ev
        JOIN registry_source rs ON rs.source_id = ev.source_id
        JOIN registry_entry re ON re.id = ev.entry_id
       WHERE ${where.join(' AND ')}
       ORDER BY ev.name, rs.position, ev.version
       LIMIT $${params.length}) x ON true
    WHERE r.name = $1
    ORDER BY x.name, x.position, x.version`;
  return { sql, params };
}

export interface Page {
  items: VersionRow[];
  next?: Cursor;
}

type PageRow = VersionRow & { registry_id: string; registry_claims: Claims | null };

/**
 * One page of visible, unshadowed rows; fetches more batches only when filtering dropped rows.
 * `registry` is undefined when no registry has that name; the caller applies the registry gate.
 */
export async function listServers(q: Queryable, registryName: string, caller: Caller, o: ListOptions): Promise<{ registry?: RegistryRow; page: Page }> {
  const out: VersionRow[] = [];
  let after = o.cursor;
  let registry: RegistryRow | undefined;
  // The winner for a name carried over from the previous page is the cursor's own position.
  let current: { name: string; position: number } | undefined = o.cursor ? { name: o.cursor.name, position: o.cursor.position } : undefined;
  const batch = o.limit + 1;
  // The first query asks for exactly one page; when filtering drops rows, later ones ask for more
  // at a time, so a caller who may see little of a big registry costs tens of queries, not thousands.
  let fetchSize = batch;
  for (let rounds = 0; rounds < 10_000; rounds++, fetchSize = Math.min(2000, fetchSize * 2)) {
    const { sql, params } = listSql(o, registryName, fetchSize, after);
    const all = await q.query<PageRow>(sql, params, true);
    if (all.length === 0) return { page: { items: [] } };
    registry ??= { id: all[0]!.registry_id, name: registryName, claims: all[0]!.registry_claims };
    // Rows the caller may not see are never even looked at when the registry itself is closed to them.
    if (!gateVisible(caller, registry.claims)) return { registry, page: { items: [] } };
    const rows = all.filter((r) => r.name !== null);
    for (const r of rows) {
      if (!gateVisible(caller, r.claims)) continue;
      if (current && current.name === r.name) {
        if (r.position !== current.position) continue;
      } else current = { name: r.name, position: r.position };
      out.push(r);
      if (out.length === batch) break;
    }
    if (out.length === batch || rows.length < fetchSize) break;
    const last = rows[rows.length - 1]!;
    after = { name: last.name, position: last.position, version: last.version };
  }
  if (out.length > o.limit) {
    const items = out.slice(0, o.limit);
    const l = items[items.length - 1]!;
    return { registry, page: { items, next: { name: l.name, position: l.position, version: l.version } } };
  }
  return { registry, page: { items: out } };
}

/** Every version of `name` from the highest-priority source the caller can see. */
export async function listVersions(q: Queryable, registryId: string, caller: Caller, name: string): Promise<VersionRow[]> {
  const rows = await q.query<VersionRow>(
    `SELECT ${COLUMNS} FROM entry_version ev
       JOIN registry_source rs ON rs.source_id = ev.source_id
       JOIN registry_entry re ON re.id = ev.entry_id
      WHERE rs.registry_id = $1 AND ev.name = $2
      ORDER BY rs.position, ev.version LIMIT 10000`,
    [registryId, name],
    true,
  );
  const visible = rows.filter((r) => gateVisible(caller, r.claims));
  const winner = visible[0]?.position;
  return visible.filter((r) => r.position === winner);
}

/** One version (or `latest`), from the first source in priority order whose copy the caller can see. */
export async function getVersion(q: Queryable, registryId: string, caller: Caller, name: string, version: string): Promise<VersionRow | undefined> {
  const byLatest = version === 'latest';
  const rows = await q.query<VersionRow>(
    `SELECT ${COLUMNS} FROM entry_version ev
       JOIN registry_source rs ON rs.source_id = ev.source_id
       JOIN registry_entry re ON re.id = ev.entry_id
      WHERE rs.registry_id = $1 AND ev.name = $2 AND ${byLatest ? 'ev.is_latest' : 'ev.version = $3'}
      ORDER BY rs.position`,
    byLatest ? [registryId, name] : [registryId, name, version],
    true,
  );
  return rows.find((r) => gateVisible(caller, r.claims));
}
