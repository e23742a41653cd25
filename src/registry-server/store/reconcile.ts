import type { RegistryServerConfig, SourceConfig } from '../config.js';
import type { Db } from '../db/db.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import { formatGoDuration } from '../duration.js';

/**
 * Makes the database match the configuration file at start-up (spec §5, "Config ↔ DB
 * reconciliation"), in one transaction under an advisory lock so replicas starting together agree:
 * CONFIG sources and registries are upserted, relinked in order, and the ones no longer configured
 * are removed. API-created rows are never touched. Changing a source's fetch settings or filter
 * forgets its last hash, so the next sync rewrites it (the reference misses filter changes).
 */
const RECONCILE_LOCK = 7_310_242;

export function sourceConfigJson(s: SourceConfig): unknown {
  return s[s.type] ?? {};
}

export function syncableType(type: string): boolean {
  return type === 'git' || type === 'api' || type === 'file';
}

export async function reconcileConfig(db: Db, cfg: RegistryServerConfig): Promise<void> {
  await db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [RECONCILE_LOCK]);
    const names = cfg.sources.map((s) => s.name);
    const clash = await q.query<{ name: string }>(`SELECT name FROM source WHERE creation_type = 'API' AND name = ANY($1::text[]) ORDER BY name`, [names]);
    if (clash.length > 0)
      throw new ThvError(ErrorCodes.InvalidConfig, `cannot overwrite API-created sources: [${clash.map((r) => r.name).join(' ')}]`);
    if (cfg.sources.some((s) => s.type === 'managed')) {
      const m = await q.query<{ name: string }>(`SELECT name FROM source WHERE creation_type = 'API' AND source_type = 'managed'`);
      if (m.length > 0) throw new ThvError(ErrorCodes.InvalidConfig, `cannot add a managed source: the API-created source '${m[0]!.name}' is already managed`);
    }
    for (const s of cfg.sources) {
      const sourceConfig = JSON.stringify(sourceConfigJson(s));
      const filter = s.filter ? JSON.stringify(s.filter) : null;
      const claims = s.claims && Object.keys(s.claims).length > 0 ? JSON.stringify(s.claims) : null;
      const interval = s.intervalMs !== undefined ? `${s.intervalMs} milliseconds` : null;
      const prev = await q.query<{ id: string; source_type: string; source_config: unknown; filter_config: unknown }>(
        `SELECT id, source_type, source_config, filter_config FROM source WHERE name = $1`,
        [s.name],
      );
      const rows = await q.query<{ id: string }>(
        `INSERT INTO source (name, creation_type, source_type, source_config, filter_config, sync_schedule, syncable, claims)
           VALUES ($1, 'CONFIG', $2, $3::jsonb, $4::jsonb, $5::interval, $6, $7::jsonb)
         ON CONFLICT (name) DO UPDATE SET source_type = EXCLUDED.source_type, source_config = EXCLUDED.source_config,
           filter_config = EXCLUDED.filter_config, sync_schedule = EXCLUDED.sync_schedule, syncable = EXCLUDED.syncable,
           claims = EXCLUDED.claims, updated_at = now()
         RETURNING id`,
        [s.name, s.type, sourceConfig, filter, interval, syncableType(s.type), claims],
      );
      const id = rows[0]!.id;
      const p = prev[0];
      const changed =
        p !== undefined &&
        (p.source_type !== s.type || JSON.stringify(p.source_config) !== JSON.stringify(JSON.parse(sourceConfig)) || JSON.stringify(p.filter_config) !== JSON.stringify(filter === null ? null : JSON.parse(filter)));
      if (changed) await q.query(`UPDATE registry_sync SET last_sync_hash = NULL, ended_at = NULL WHERE source_id = $1`, [id]);
      // Synced entries carry their source's claims; published (managed) entries keep their own.
      if (syncableType(s.type))
        await q.query(`UPDATE registry_entry SET claims = $2::jsonb, updated_at = now() WHERE source_id = $1 AND claims IS DISTINCT FROM $2::jsonb`, [id, claims]);
      const initial = syncableType(s.type)
        ? ['FAILED', 'No previous sync status found']
        : ['COMPLETED', `Non-synced source (type: ${s.type})`];
      await q.query(
        `INSERT INTO registry_sync (source_id, sync_status, error_msg) VALUES ($1, $2, $3) ON CONFLICT (source_id) DO NOTHING`,
        [id, initial[0], initial[1]],
      );
    }
    for (const r of cfg.registries) {
      const claims = r.claims && Object.keys(r.claims).length > 0 ? JSON.stringify(r.claims) : null;
      const existing = await q.query<{ creation_type: string }>(`SELECT creation_type FROM registry WHERE name = $1`, [r.name]);
      if (existing[0]?.creation_type === 'API')
        throw new ThvError(ErrorCodes.InvalidConfig, `cannot overwrite API-created registry: ${r.name}`);
      const rows = await q.query<{ id: string }>(
        `INSERT INTO registry (name, claims, creation_type) VALUES ($1, $2::jsonb, 'CONFIG')
         ON CONFLICT (name) DO UPDATE SET claims = EXCLUDED.claims, updated_at = now() RETURNING id`,
        [r.name, claims],
      );
      const id = rows[0]!.id;
      await q.query(`DELETE FROM registry_source WHERE registry_id = $1`, [id]);
      await q.query(
        `INSERT INTO registry_source (registry_id, source_id, position)
           SELECT $1, s.id, x.pos::int - 1 FROM unnest($2::text[]) WITH ORDINALITY AS x(name, pos) JOIN source s ON s.name = x.name`,
        [id, r.sources],
      );
    }
    await q.query(`DELETE FROM registry WHERE creation_type = 'CONFIG' AND NOT (name = ANY($1::text[]))`, [cfg.registries.map((r) => r.name)]);
    const gone = await q.query<{ id: string }>(`SELECT id FROM source WHERE creation_type = 'CONFIG' AND NOT (name = ANY($1::text[]))`, [names]);
    for (const g of gone) {
      await q.query(`DELETE FROM registry_source WHERE source_id = $1`, [g.id]);
      await q.query(`DELETE FROM source WHERE id = $1`, [g.id]);
    }
  });
}

export { formatGoDuration };
