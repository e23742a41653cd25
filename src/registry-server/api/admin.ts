import { Hono, type Context } from 'hono';
import { isThvError } from '../../errors.js';
import { claimValueError, claimsEqual, gateContain, gateVisible, isEmptyClaims, type Caller, type Claims } from '../claims.js';
import { parseSourceBody, type AuthConfig, type SourceConfig } from '../config.js';
import type { Db, Queryable } from '../db/db.js';
import { formatGoDuration } from '../duration.js';
import { SourceDataError, checkServer } from '../sources/format.js';
import { sourceConfigJson, syncableType } from '../store/reconcile.js';
import { MetaTooLargeError, recomputeLatest, storedServer } from '../store/write.js';
import { compareVersions } from '../semver.js';
import { requireRole, type AuthVars } from './auth.js';
import { ApiError, badRequest, conflict, forbidden, notFound } from './errors.js';
import { decodeParam, rawPathOf, serverNameProblem } from './params.js';

/**
 * The admin API `/v1` (spec §3.8): who am I, sources, registries, and publishing into the managed
 * source. Roles guard each route; claims decide what a caller sees (404 when hidden) and may change
 * (403). CONFIG-created sources and registries are read-only here.
 */
type Env = { Variables: AuthVars };

interface SourceRow {
  id: string;
  name: string;
  creation_type: string;
  source_type: string;
  source_config: unknown;
  filter_config: unknown;
  interval_ms: number | null;
  claims: Claims | null;
  created_at: Date;
  updated_at: Date;
  sync_status: string | null;
  error_msg: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  last_success_at: Date | null;
  attempt_count: number | null;
  server_count: number | null;
  locked?: boolean;
}

const SOURCE_SELECT = `SELECT s.id, s.name, s.creation_type, s.source_type, s.source_config, s.filter_config,
  (EXTRACT(EPOCH FROM s.sync_schedule) * 1000)::float8 AS interval_ms, s.claims, s.created_at, s.updated_at,
  rs.sync_status, rs.error_msg, rs.started_at, rs.ended_at, rs.last_success_at, rs.attempt_count, rs.server_count
  FROM source s LEFT JOIN registry_sync rs ON rs.source_id = s.id`;

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

function phaseOf(status: string | null): string {
  switch (status) {
    case 'IN_PROGRESS':
      return 'syncing';
    case 'COMPLETED':
      return 'complete';
    case 'FAILED':
      return 'failed';
    default:
      return 'unknown';
  }
}

function sourceInfo(r: SourceRow): Record<string, unknown> {
  const info: Record<string, unknown> = {
    name: r.name,
    type: r.source_type,
    creationType: r.creation_type,
    sourceType: r.source_type,
    sourceConfig: r.source_config ?? undefined,
    filterConfig: r.filter_config ?? undefined,
    syncSchedule: r.interval_ms != null ? formatGoDuration(r.interval_ms) : undefined,
    claims: isEmptyClaims(r.claims) ? undefined : r.claims,
    syncStatus: {
      phase: phaseOf(r.sync_status),
      lastSyncTime: iso(r.last_success_at),
      lastAttempt: iso(r.started_at),
      attemptCount: r.attempt_count ?? 0,
      serverCount: r.server_count ?? 0,
      skillCount: 0,
      pluginCount: 0,
      message: r.error_msg ?? undefined,
    },
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
  return info;
}

async function readJson(c: Context): Promise<Record<string, unknown>> {
  // Read the text first, then parse: a parse error must not abort the request stream.
  const text = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw badRequest(`invalid request body: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('invalid request body: expected a JSON object');
  return body as Record<string, unknown>;
}

function claimsFromBody(v: unknown, what: string): Claims | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`invalid ${what}: claims must be an object`);
  const err = claimValueError(v as Record<string, unknown>);
  if (err) throw badRequest(`invalid ${what}: ${err}`);
  return v as Claims;
}

const claimsParam = (c: Claims | undefined) => (isEmptyClaims(c) ? null : JSON.stringify(c));

async function managedSource(q: Queryable): Promise<{ id: string; claims: Claims | null } | undefined> {
  const rows = await q.query<{ id: string; claims: Claims | null }>(`SELECT id, claims FROM source WHERE source_type = 'managed' LIMIT 1`);
  return rows[0];
}

export function adminRoutes(db: Db, auth: AuthConfig, maxMetaSize: number): Hono<Env> {
  const app = new Hono<Env>();
  const authzOn = auth.authz !== undefined;
  const caller = (c: Context<Env>): Caller => c.get('caller');

  app.get('/me', (c) => {
    const id = c.get('identity');
    if (!c.get('authenticated') || !id) return c.json({ error: 'authentication required' }, 401);
    return c.json({ subject: id.subject, roles: c.get('roles') });
  });

  // ---- sources -------------------------------------------------------------------------------
  app.get('/sources', requireRole(auth, 'manageSources'), async (c) => {
    const rows = await db.query<SourceRow>(`${SOURCE_SELECT} ORDER BY s.created_at, s.name`);
    return c.json({ sources: rows.filter((r) => gateVisible(caller(c), r.claims)).map(sourceInfo) });
  });

  const visibleSource = async (c: Context<Env>, name: string): Promise<SourceRow> => {
    const rows = await db.query<SourceRow>(`${SOURCE_SELECT} WHERE s.name = $1`, [name]);
    const r = rows[0];
    if (!r || !gateVisible(caller(c), r.claims)) throw notFound(`source not found: ${name}`);
    return r;
  };

  app.get('/sources/:name', requireRole(auth, 'manageSources'), async (c) => c.json(sourceInfo(await visibleSource(c, c.req.param('name')))));

  app.get('/sources/:name/entries', requireRole(auth, 'manageSources'), async (c) => {
    const s = await visibleSource(c, c.req.param('name'));
    const rows = await db.query<{ name: string; entry_type: string; claims: Claims | null; version: string; title: string | null; description: string | null; created_at: Date; updated_at: Date }>(
      `SELECT re.name, re.entry_type, re.claims, ev.version, ev.title, ev.description, ev.created_at, ev.updated_at
         FROM registry_entry re JOIN entry_version ev ON ev.entry_id = re.id WHERE re.source_id = $1 ORDER BY re.name, ev.version LIMIT 100000`,
      [s.id],
    );
    const entries: Array<Record<string, unknown> & { versions: unknown[] }> = [];
    for (const r of rows) {
      let e = entries[entries.length - 1];
      if (!e || e.name !== r.name) {
        e = { entryType: r.entry_type, name: r.name, claims: isEmptyClaims(r.claims) ? undefined : r.claims, versions: [] };
        entries.push(e);
      }
      e.versions.push({ version: r.version, title: r.title ?? undefined, description: r.description ?? undefined, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) });
    }
    return c.json({ entries });
  });

  app.put('/sources/:name', requireRole(auth, 'manageSources'), async (c) => {
    const name = c.req.param('name');
    const body = await readJson(c);
    let src: SourceConfig;
    try {
      src = parseSourceBody(name, body);
    } catch (err) {
      if (isThvError(err)) throw badRequest(`invalid source configuration: ${err.message}`);
      throw err;
    }
    const existing = (await db.query<SourceRow>(`${SOURCE_SELECT} WHERE s.name = $1`, [name]))[0];
    const cl = caller(c);
    if (src.claims && !gateContain(cl, src.claims)) throw forbidden('insufficient claims: the new claims must all be held by the caller');
    if (!src.claims && authzOn && cl.claims && !cl.superAdmin) throw forbidden('insufficient claims: claims are required when authorization is enabled');
    const cfg = JSON.stringify(sourceConfigJson(src));
    const filter = src.filter ? JSON.stringify(src.filter) : null;
    const interval = src.intervalMs !== undefined ? `${src.intervalMs} milliseconds` : null;
    if (!existing) {
      if (src.type === 'managed' && (await managedSource(db))) throw conflict('at most one managed source is allowed');
      await db.tx(async (q) => {
        const rows = await q.query<{ id: string }>(
          `INSERT INTO source (name, creation_type, source_type, source_config, filter_config, sync_schedule, syncable, claims)
             VALUES ($1, 'API', $2, $3::jsonb, $4::jsonb, $5::interval, $6, $7::jsonb) RETURNING id`,
          [name, src.type, cfg, filter, interval, syncableType(src.type), claimsParam(src.claims)],
        );
        const initial = syncableType(src.type) ? ['FAILED', 'No previous sync status found'] : ['COMPLETED', `Non-synced registry (type: ${src.type})`];
        await q.query(`INSERT INTO registry_sync (source_id, sync_status, error_msg) VALUES ($1, $2, $3)`, [rows[0]!.id, initial[0], initial[1]]);
      });
      return c.json(sourceInfo(await visibleSource(c, name).catch(async () => (await db.query<SourceRow>(`${SOURCE_SELECT} WHERE s.name = $1`, [name]))[0]!)), 201);
    }
    if (existing.creation_type === 'CONFIG') throw forbidden(`cannot modify config-created source via API: ${name}`);
    if (!gateVisible(cl, existing.claims)) throw forbidden(`insufficient claims: cannot modify source ${name}`);
    if (existing.source_type !== src.type)
      throw badRequest(`changing source type is not allowed: cannot change from '${existing.source_type}' to '${src.type}', delete and recreate the source instead`);
    if (src.type === 'file') {
      const old = existing.source_config as { path?: string; url?: string };
      const was = old?.url ? 'url' : 'path';
      const now = src.file?.url ? 'url' : 'path';
      if (was !== now) throw badRequest(`invalid source configuration: cannot change file source type from '${was}' to '${now}', delete and recreate the source instead`);
    }
    await db.tx(async (q) => {
      await q.query(
        `UPDATE source SET source_config = $2::jsonb, filter_config = $3::jsonb, sync_schedule = $4::interval, claims = $5::jsonb, updated_at = now() WHERE id = $1`,
        [existing.id, cfg, filter, interval, claimsParam(src.claims)],
      );
      if (syncableType(src.type)) {
        await q.query(`UPDATE registry_sync SET last_sync_hash = NULL, ended_at = NULL WHERE source_id = $1`, [existing.id]);
        await q.query(`UPDATE registry_entry SET claims = $2::jsonb WHERE source_id = $1`, [existing.id, claimsParam(src.claims)]);
      }
    });
    return c.json(sourceInfo((await db.query<SourceRow>(`${SOURCE_SELECT} WHERE s.name = $1`, [name]))[0]!), 200);
  });

  app.delete('/sources/:name', requireRole(auth, 'manageSources'), async (c) => {
    const name = c.req.param('name');
    const r = (await db.query<SourceRow>(`${SOURCE_SELECT} WHERE s.name = $1`, [name]))[0];
    if (!r) throw notFound(`source not found: ${name}`);
    if (r.creation_type === 'CONFIG') throw forbidden(`cannot modify config-created source via API: ${name}`);
    if (!gateVisible(caller(c), r.claims)) throw forbidden(`insufficient claims: cannot delete source ${name}`);
    const refs = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM registry_source WHERE source_id = $1`, [r.id]);
    const n = refs[0]?.n ?? 0;
    if (n > 0) throw conflict(`source is referenced by one or more registries: ${name} is referenced by ${n} registry(ies)`);
    await db.query(`DELETE FROM source WHERE id = $1`, [r.id]);
    return c.body(null, 204);
  });

  // ---- registries ----------------------------------------------------------------------------
  interface RegRow {
    id: string;
    name: string;
    claims: Claims | null;
    creation_type: string;
    created_at: Date;
    updated_at: Date;
    sources: string[] | null;
  }
  const REG_SELECT = `SELECT r.id, r.name, r.claims, r.creation_type, r.created_at, r.updated_at,
    (SELECT array_agg(s.name ORDER BY rs.position) FROM registry_source rs JOIN source s ON s.id = rs.source_id WHERE rs.registry_id = r.id) AS sources
    FROM registry r`;
  const regInfo = (r: RegRow) => ({
    name: r.name,
    claims: isEmptyClaims(r.claims) ? undefined : r.claims,
    creationType: r.creation_type,
    sources: r.sources ?? [],
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  });
  const visibleRegistry = async (c: Context<Env>, name: string): Promise<RegRow> => {
    const r = (await db.query<RegRow>(`${REG_SELECT} WHERE r.name = $1`, [name]))[0];
    if (!r || !gateVisible(caller(c), r.claims)) throw notFound(`registry not found: ${name}`);
    return r;
  };

  app.get('/registries', async (c) => {
    const rows = await db.query<RegRow>(`${REG_SELECT} ORDER BY r.name`);
    return c.json({ registries: rows.filter((r) => gateVisible(caller(c), r.claims)).map(regInfo) });
  });
  app.get('/registries/:name', async (c) => c.json(regInfo(await visibleRegistry(c, c.req.param('name')))));
  app.get('/registries/:name/entries', requireRole(auth, 'manageRegistries'), async (c) => {
    const r = await visibleRegistry(c, c.req.param('name'));
    const rows = await db.query<{ entry_type: string; name: string; version: string; title: string | null; description: string | null; created_at: Date; updated_at: Date; source_name: string; position: number }>(
      `SELECT re.entry_type, ev.name, ev.version, ev.title, ev.description, ev.created_at, ev.updated_at, s.name AS source_name, rs.position
         FROM registry_source rs JOIN source s ON s.id = rs.source_id JOIN entry_version ev ON ev.source_id = rs.source_id
         JOIN registry_entry re ON re.id = ev.entry_id
        WHERE rs.registry_id = $1 ORDER BY ev.name, ev.version, rs.position LIMIT 100000`,
      [r.id],
    );
    return c.json({
      entries: rows.map((x) => ({
        entryType: x.entry_type,
        name: x.name,
        version: x.version,
        title: x.title ?? undefined,
        description: x.description ?? undefined,
        createdAt: iso(x.created_at),
        updatedAt: iso(x.updated_at),
        sourceName: x.source_name,
        position: x.position,
      })),
    });
  });
  app.put('/registries/:name', requireRole(auth, 'manageRegistries'), async (c) => {
    const name = c.req.param('name');
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw badRequest('invalid registry configuration: name must be 1-128 characters of letters, digits, ".", "_" or "-"');
    const body = await readJson(c);
    const sources = body.sources;
    if (!Array.isArray(sources) || sources.length === 0) throw badRequest('invalid registry configuration: at least one source is required');
    if (!sources.every((s) => typeof s === 'string')) throw badRequest('invalid registry configuration: sources must be strings');
    const dup = sources.find((s, i) => sources.indexOf(s) !== i);
    if (dup !== undefined) throw badRequest(`invalid registry configuration: duplicate source: ${dup}`);
    const claims = claimsFromBody(body.claims, 'registry configuration');
    const cl = caller(c);
    if (claims && !gateContain(cl, claims)) throw forbidden('insufficient claims: the new claims must all be held by the caller');
    const found = await db.query<{ id: string; name: string; claims: Claims | null }>(`SELECT id, name, claims FROM source WHERE name = ANY($1::text[])`, [sources]);
    for (const s of sources as string[]) {
      const f = found.find((x) => x.name === s);
      if (!f) throw badRequest(`source not found: ${s}`);
      if (!gateVisible(cl, f.claims)) throw forbidden(`insufficient claims: caller cannot see source: cannot reference source ${s}`);
    }
    const existing = (await db.query<RegRow>(`${REG_SELECT} WHERE r.name = $1`, [name]))[0];
    if (existing) {
      if (existing.creation_type === 'CONFIG') throw forbidden(`cannot modify config-created registry via API: ${name}`);
      if (!gateVisible(cl, existing.claims)) throw forbidden(`insufficient claims: cannot modify registry ${name}`);
    }
    await db.tx(async (q) => {
      let id = existing?.id;
      if (id) await q.query(`UPDATE registry SET claims = $2::jsonb, updated_at = now() WHERE id = $1`, [id, claimsParam(claims)]);
      else id = (await q.query<{ id: string }>(`INSERT INTO registry (name, claims, creation_type) VALUES ($1, $2::jsonb, 'API') RETURNING id`, [name, claimsParam(claims)]))[0]!.id;
      await q.query(`DELETE FROM registry_source WHERE registry_id = $1`, [id]);
      await q.query(
        `INSERT INTO registry_source (registry_id, source_id, position)
           SELECT $1, s.id, x.pos::int - 1 FROM unnest($2::text[]) WITH ORDINALITY AS x(name, pos) JOIN source s ON s.name = x.name`,
        [id, sources],
      );
    });
    const row = (await db.query<RegRow>(`${REG_SELECT} WHERE r.name = $1`, [name]))[0]!;
    return c.json(regInfo(row), existing ? 200 : 201);
  });
  app.delete('/registries/:name', requireRole(auth, 'manageRegistries'), async (c) => {
    const name = c.req.param('name');
    const r = (await db.query<RegRow>(`${REG_SELECT} WHERE r.name = $1`, [name]))[0];
    if (!r) throw notFound(`registry not found: ${name}`);
    if (r.creation_type === 'CONFIG') throw forbidden(`cannot modify config-created registry via API: ${name}`);
    if (!gateVisible(caller(c), r.claims)) throw forbidden(`insufficient claims: cannot delete registry ${name}`);
    await db.query(`DELETE FROM registry WHERE id = $1`, [r.id]);
    return c.body(null, 204);
  });

  // ---- entries (the managed source) ------------------------------------------------------------
  app.post('/entries', requireRole(auth, 'manageEntries'), async (c) => {
    const body = await readJson(c);
    const kinds = (['server', 'skill', 'plugin'] as const).filter((k) => body[k] !== undefined && body[k] !== null);
    if (kinds.length !== 1) throw badRequest("exactly one of 'server', 'skill', or 'plugin' must be provided");
    if (kinds[0] !== 'server') throw badRequest('skills and plugins are not supported by this server yet');
    const claims = claimsFromBody(body.claims, 'request body');
    if (authzOn && isEmptyClaims(claims)) throw badRequest('claims are required when authorization is enabled');
    let server;
    try {
      server = checkServer(body.server, 'server');
    } catch (err) {
      if (err instanceof SourceDataError) throw badRequest(`invalid server: ${err.message}`);
      throw err;
    }
    if (serverNameProblem(server.name)) throw badRequest(`invalid server name: ${server.name}`);
    if (server.version.length > 255 || /[\s\u0000-\u001f]/.test(server.version)) throw badRequest(`invalid server version: ${server.version}`);
    const cl = caller(c);
    if (!isEmptyClaims(claims) && !gateContain(cl, claims)) throw forbidden('insufficient claims: the entry claims must all be held by the caller');
    let stored;
    try {
      stored = storedServer(server, maxMetaSize);
    } catch (err) {
      if (err instanceof MetaTooLargeError) throw new ApiError(413, err.message);
      throw err;
    }
    const managed = await managedSource(db);
    if (!managed) throw new ApiError(500, 'no managed source available for publishing');
    if (!gateVisible(cl, managed.claims)) throw forbidden('insufficient claims: cannot publish into the managed source');
    await db.tx(async (q) => {
      // Serialise publishes of one name (replicas included), so the first publisher fixes its claims.
      await q.query(`SELECT pg_advisory_xact_lock(hashtextextended('thv-registry-publish:' || $1, 0))`, [server.name]);
      const entry = (await q.query<{ id: string; claims: Claims | null }>(
        `SELECT id, claims FROM registry_entry WHERE source_id = $1 AND entry_type = 'MCP' AND name = $2`,
        [managed.id, server.name],
      ))[0];
      let entryId = entry?.id;
      if (entry) {
        if (!claimsEqual(entry.claims, claims)) throw conflict('claims mismatch: claims do not match existing entry');
        const v = await q.query(`SELECT 1 FROM entry_version WHERE entry_id = $1 AND version = $2`, [entry.id, server.version]);
        if (v.length > 0) throw conflict(`version already exists: ${server.name}@${server.version}`);
      } else {
        entryId = (await q.query<{ id: string }>(
          `INSERT INTO registry_entry (source_id, entry_type, name, claims) VALUES ($1, 'MCP', $2, $3::jsonb) RETURNING id`,
          [managed.id, server.name, claimsParam(claims)],
        ))[0]!.id;
      }
      const current = (await q.query<{ version: string }>(`SELECT version FROM entry_version WHERE entry_id = $1 AND is_latest`, [entryId]))[0];
      const newer = !current || compareVersions(server.version, current.version) > 0;
      if (newer) await q.query(`UPDATE entry_version SET is_latest = false WHERE entry_id = $1 AND is_latest`, [entryId]);
      await q.query(
        `INSERT INTO entry_version (entry_id, source_id, name, version, title, description, server, is_latest) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
        [entryId, managed.id, server.name, server.version, typeof stored.title === 'string' ? stored.title : null, stored.description ?? null, JSON.stringify(stored), newer],
      );
      await q.query(`UPDATE registry_sync SET server_count = (SELECT count(*) FROM entry_version WHERE source_id = $1) WHERE source_id = $1`, [managed.id]);
    });
    return c.json(stored, 201);
  });

  // Routed by hand: the entry name is URL-encoded and may contain an encoded '/'.
  const entryPath = (c: Context<Env>) => {
    const segs = rawPathOf(c.req.url).split('/'); // ['', 'v1', 'entries', type, name, ...]
    const type = decodeParam(segs[3] ?? '', 'type');
    const name = decodeParam(segs[4] ?? '', 'name');
    return { segs, type, name };
  };
  const entryType = (type: string, message: string) => {
    if (type === 'server') return 'MCP';
    if (type === 'skill' || type === 'plugin') return type.toUpperCase();
    throw badRequest(message);
  };
  const managedEntry = async (c: Context<Env>, type: string, name: string, what: string) => {
    const managed = await managedSource(db);
    if (!managed) throw new ApiError(500, `no managed source available${what}`);
    const e = (await db.query<{ id: string; claims: Claims | null }>(
      `SELECT id, claims FROM registry_entry WHERE source_id = $1 AND entry_type = $2 AND name = $3`,
      [managed.id, type, name],
    ))[0];
    return { managed, entry: e };
  };

  app.delete('/entries/*', requireRole(auth, 'manageEntries'), async (c) => {
    const { segs, type, name } = entryPath(c);
    if (segs.length !== 7 || segs[5] !== 'versions') throw notFound('not found');
    const version = decodeParam(segs[6] ?? '', 'version');
    const t = entryType(type, "unsupported entry type: must be 'server', 'skill', or 'plugin'");
    const { managed, entry } = await managedEntry(c, t, name, ' for deletion');
    if (!entry) throw notFound(`not found: ${name}@${version}`);
    if (!gateVisible(caller(c), entry.claims)) throw forbidden(`insufficient claims: cannot delete ${name}`);
    const gone = await db.tx(async (q) => {
      const del = await q.query(`DELETE FROM entry_version WHERE entry_id = $1 AND version = $2 RETURNING id`, [entry.id, version]);
      if (del.length === 0) return false;
      const left = await q.query(`SELECT 1 FROM entry_version WHERE entry_id = $1 LIMIT 1`, [entry.id]);
      if (left.length === 0) await q.query(`DELETE FROM registry_entry WHERE id = $1`, [entry.id]);
      else await recomputeLatest(q, managed.id, name);
      // Keep the managed source's status count in step, as a publish does.
      await q.query(`UPDATE registry_sync SET server_count = (SELECT count(*) FROM entry_version WHERE source_id = $1) WHERE source_id = $1`, [managed.id]);
      return true;
    });
    if (!gone) throw notFound(`not found: ${name}@${version}`);
    return c.body(null, 204);
  });

  app.get('/entries/*', requireRole(auth, 'manageEntries'), async (c) => {
    const { segs, type, name } = entryPath(c);
    if (segs.length !== 6 || segs[5] !== 'claims') throw notFound('not found');
    const t = entryType(type, 'invalid option: invalid entry type: must be "server", "skill", or "plugin"');
    const { entry } = await managedEntry(c, t, name, '');
    if (!entry) throw notFound(`not found: ${name}`);
    if (!gateVisible(caller(c), entry.claims)) throw forbidden(`insufficient claims: cannot read claims of ${name}`);
    return c.json({ claims: entry.claims ?? {} });
  });

  app.put('/entries/*', requireRole(auth, 'manageEntries'), async (c) => {
    const { segs, type, name } = entryPath(c);
    if (segs.length !== 6 || segs[5] !== 'claims') throw notFound('not found');
    const t = entryType(type, 'invalid option: invalid entry type: must be "server", "skill", or "plugin"');
    const body = await readJson(c);
    const claims = claimsFromBody(body.claims, 'request body');
    const { entry } = await managedEntry(c, t, name, ' for updating claims');
    if (!entry) throw notFound(`not found: ${name}`);
    const cl = caller(c);
    if (!gateVisible(cl, entry.claims)) throw forbidden(`insufficient claims: cannot change claims of ${name}`);
    if (!gateContain(cl, claims)) throw forbidden('insufficient claims: the new claims must all be held by the caller');
    await db.query(`UPDATE registry_entry SET claims = $2::jsonb, updated_at = now() WHERE id = $1`, [entry.id, claimsParam(claims)]);
    return c.body(null, 204);
  });

  return app;
}
