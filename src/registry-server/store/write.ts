import type { Claims } from '../claims.js';
import type { Queryable } from '../db/db.js';
import type { ServerJSON } from '../sources/format.js';
import { latestOf } from '../semver.js';

/**
 * Replaces the MCP entries of one source with `servers`, inside the caller's transaction: entries and
 * versions are upserted in bulk (one statement each, the rows passed as one JSON parameter, so 100k
 * versions cost a few statements, not 100k), missing ones deleted, the latest pointer recomputed.
 * A version whose content did not change keeps its `updated_at`, so `updated_since` means something.
 */
export const SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const OFFICIAL = 'io.modelcontextprotocol.registry/official';
const PUBLISHER = 'io.modelcontextprotocol.registry/publisher-provided';

export class MetaTooLargeError extends Error {}

/** The JSON we keep for a server: as given, minus any official block (that one is ours to compute). */
export function storedServer(s: ServerJSON, maxMetaSize: number): ServerJSON {
  const out: ServerJSON = { ...s };
  if (typeof out.$schema !== 'string' || out.$schema === '') out.$schema = SCHEMA_URL;
  const meta = out._meta as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object') {
    const rest = { ...meta };
    delete rest[OFFICIAL];
    const pp = rest[PUBLISHER];
    if (pp !== undefined && Buffer.byteLength(JSON.stringify(pp)) > maxMetaSize)
      throw new MetaTooLargeError(`_meta publisher-provided of ${s.name}@${s.version} is larger than ${maxMetaSize} bytes`);
    if (Object.keys(rest).length === 0) delete out._meta;
    else out._meta = rest;
  }
  return out;
}

export async function replaceSourceServers(
  q: Queryable,
  sourceId: string,
  servers: ServerJSON[],
  claims: Claims | undefined,
  maxMetaSize: number,
): Promise<number> {
  // One row per name@version; a later duplicate in the document wins.
  const byKey = new Map<string, ServerJSON>();
  for (const s of servers) byKey.set(`${s.name}\u0000${s.version}`, storedServer(s, maxMetaSize));
  const latest = new Map<string, string>();
  const versionsByName = new Map<string, string[]>();
  for (const s of byKey.values()) {
    const list = versionsByName.get(s.name) ?? [];
    list.push(s.version);
    versionsByName.set(s.name, list);
  }
  for (const [name, list] of versionsByName) latest.set(name, latestOf(list)!);
  const names = [...versionsByName.keys()];
  const claimsJson = claims && Object.keys(claims).length > 0 ? JSON.stringify(claims) : null;

  await q.query(`DELETE FROM registry_entry WHERE source_id = $1 AND entry_type = 'MCP' AND NOT (name = ANY($2::text[]))`, [sourceId, names]);
  await q.query(
    `INSERT INTO registry_entry (source_id, entry_type, name, claims)
       SELECT $1, 'MCP', x.name, $2::jsonb FROM unnest($3::text[]) AS x(name)
     ON CONFLICT (source_id, entry_type, name) DO UPDATE SET claims = EXCLUDED.claims, updated_at = now()
       WHERE registry_entry.claims IS DISTINCT FROM EXCLUDED.claims`,
    [sourceId, claimsJson, names],
  );
  const rows = [...byKey.values()].map((s) => ({
    name: s.name,
    version: s.version,
    title: typeof s.title === 'string' ? s.title : null,
    description: typeof s.description === 'string' ? s.description : null,
    server: s,
    is_latest: latest.get(s.name) === s.version,
  }));
  const payload = JSON.stringify(rows);
  await q.query(
    `DELETE FROM entry_version ev WHERE ev.source_id = $1 AND NOT EXISTS (
       SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(name text, version text) WHERE x.name = ev.name AND x.version = ev.version)`,
    [sourceId, payload],
  );
  await q.query(
    `INSERT INTO entry_version (entry_id, source_id, name, version, title, description, server, is_latest)
       SELECT re.id, $1, x.name, x.version, x.title, x.description, x.server, x.is_latest
       FROM jsonb_to_recordset($2::jsonb) AS x(name text, version text, title text, description text, server jsonb, is_latest boolean)
       JOIN registry_entry re ON re.source_id = $1 AND re.entry_type = 'MCP' AND re.name = x.name
     ON CONFLICT (entry_id, version) DO UPDATE SET
       title = EXCLUDED.title, description = EXCLUDED.description, server = EXCLUDED.server, is_latest = EXCLUDED.is_latest,
       updated_at = CASE WHEN entry_version.server IS DISTINCT FROM EXCLUDED.server THEN now() ELSE entry_version.updated_at END
     WHERE entry_version.server IS DISTINCT FROM EXCLUDED.server OR entry_version.is_latest <> EXCLUDED.is_latest`,
    [sourceId, payload],
  );
  return rows.length;
}

/** Points the latest flag of one name (in one source) at its highest remaining version. */
export async function recomputeLatest(q: Queryable, sourceId: string, name: string): Promise<void> {
  const rows = await q.query<{ version: string }>(`SELECT version FROM entry_version WHERE source_id = $1 AND name = $2`, [sourceId, name]);
  const best = latestOf(rows.map((r) => r.version));
  await q.query(`UPDATE entry_version SET is_latest = (version = $3) WHERE source_id = $1 AND name = $2 AND is_latest <> (version = $3)`, [
    sourceId,
    name,
    best ?? '',
  ]);
}
