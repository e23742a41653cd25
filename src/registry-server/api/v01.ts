import type { Context } from 'hono';
import { gateVisible, type Caller } from '../claims.js';
import type { Db } from '../db/db.js';
import { CursorError, decodeCursor, encodeCursor, findRegistry, getVersion, listServers, listVersions, type VersionRow } from '../store/read.js';
import { ApiError, badRequest, forbidden, notFound } from './errors.js';
import { checkServerName, decodeParam, rawPathOf } from './params.js';

/**
 * The MCP Registry API v0.1 under `/registry/{registry}/v0.1/` (spec §3.6). Routed by hand on the raw
 * path so an encoded `/` in a server name (`io.example%2Fserver`) stays inside its segment.
 * Each server carries the official registry's `_meta` block (status, publishedAt, updatedAt, isLatest).
 */
export const DEFAULT_LIMIT = 30;
export const MAX_LIMIT = 1000;
const OFFICIAL = 'io.modelcontextprotocol.registry/official';

/** One `ServerResponse` as JSON text; the stored server JSON is spliced in as it is. */
export function serverResponseJson(r: VersionRow): string {
  const official = {
    status: 'active',
    publishedAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    isLatest: r.is_latest,
  };
  return `{"server":${r.server},"_meta":{"${OFFICIAL}":${JSON.stringify(official)}}}`;
}

function listJson(c: Context, rows: VersionRow[], metadata: Record<string, unknown>): Response {
  return c.body(`{"servers":[${rows.map(serverResponseJson).join(',')}],"metadata":${JSON.stringify(metadata)}}`, 200, { 'Content-Type': 'application/json' });
}

function parseLimit(v: string | undefined): number {
  if (v === undefined || v === '') return DEFAULT_LIMIT;
  if (!/^[+-]?\d+$/.test(v.trim())) throw badRequest('Invalid limit parameter: must be an integer');
  const n = Number(v.trim());
  if (n < 1) throw badRequest('Invalid limit parameter: must be at least 1');
  return Math.min(n, MAX_LIMIT);
}

function parseUpdatedSince(v: string | undefined): Date | undefined {
  if (v === undefined || v === '') return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v));
  if (!ok) throw badRequest('Invalid updated_since parameter: must be RFC3339 format (e.g., 2025-08-07T13:15:04.280Z)');
  return new Date(v);
}

async function registryFor(db: Db, caller: Caller, name: string) {
  const reg = await findRegistry(db, name);
  if (!reg) throw notFound('registry not found');
  if (!gateVisible(caller, reg.claims)) throw forbidden('forbidden: insufficient claims for registry');
  return reg;
}

/** Handles GET /registry/...; returns undefined for paths that are not ours (router 404). */
export async function handleV01(c: Context, db: Db, caller: Caller): Promise<Response | undefined> {
  const segs = rawPathOf(c.req.url).split('/');
  // ['', 'registry', reg, 'v0.1', 'servers', name, 'versions', version]
  if (segs[1] !== 'registry' || segs[3] !== 'v0.1' || segs[4] !== 'servers') return undefined;
  if (segs.length > 8) return undefined;
  const regName = decodeParam(segs[2] ?? '', 'registryName');
  if (segs.length === 5 || (segs.length === 6 && segs[5] === '')) {
    const q = c.req.query();
    const limit = parseLimit(q.limit);
    let cursor;
    if (q.cursor !== undefined && q.cursor !== '') {
      try {
        cursor = decodeCursor(q.cursor);
      } catch (err) {
        if (err instanceof CursorError) throw badRequest('Invalid cursor parameter');
        throw err;
      }
    }
    const updatedSince = parseUpdatedSince(q.updated_since);
    const search = q.search?.trim() || undefined;
    if (search !== undefined && search.length > 256) throw badRequest('Invalid search parameter: longer than 256 characters');
    const version = q.version?.trim() || undefined;
    const { registry, page } = await listServers(db, regName, caller, { limit, cursor, search, updatedSince, version });
    if (!registry) throw notFound('registry not found');
    if (!gateVisible(caller, registry.claims)) throw forbidden('forbidden: insufficient claims for registry');
    const metadata: Record<string, unknown> = { count: page.items.length };
    if (page.next) metadata.nextCursor = encodeCursor(page.next);
    return listJson(c, page.items, metadata);
  }
  if (segs[6] !== 'versions') return undefined;
  const name = checkServerName(decodeParam(segs[5] ?? '', 'serverName'));
  if (segs.length === 7 || (segs.length === 8 && segs[7] === '')) {
    const reg = await registryFor(db, caller, regName);
    const rows = await listVersions(db, reg.id, caller, name);
    if (rows.length === 0) throw notFound('server not found');
    return listJson(c, rows, { count: rows.length });
  }
  const version = decodeParam(segs[7] ?? '', 'version');
  if (version.length > 255) throw badRequest('version is longer than 255 characters');
  const reg = await registryFor(db, caller, regName);
  const row = await getVersion(db, reg.id, caller, name, version);
  if (!row) throw notFound('not found');
  return c.body(serverResponseJson(row), 200, { 'Content-Type': 'application/json' });
}

export { ApiError };
