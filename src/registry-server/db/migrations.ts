import type { Db, Queryable } from './db.js';

/**
 * The schema, as numbered up/down steps tracked in `schema_migrations` (same table name as
 * golang-migrate). The same SQL runs on PostgreSQL and PGlite. Migrations run in one transaction
 * under an advisory lock, so several replicas starting together apply each step once.
 */
export interface Migration {
  version: number;
  name: string;
  up: string;
  down: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sources_registries_entries',
    up: `
CREATE TABLE source (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE,
  creation_type text NOT NULL DEFAULT 'CONFIG' CHECK (creation_type IN ('API','CONFIG')),
  source_type text NOT NULL CHECK (source_type IN ('git','api','file','managed','kubernetes')),
  source_config jsonb,
  filter_config jsonb,
  sync_schedule interval,
  syncable boolean NOT NULL DEFAULT true,
  claims jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE registry (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE,
  claims jsonb,
  creation_type text NOT NULL DEFAULT 'CONFIG' CHECK (creation_type IN ('API','CONFIG')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE registry_source (
  registry_id uuid NOT NULL REFERENCES registry(id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES source(id) ON DELETE RESTRICT,
  position int NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (registry_id, source_id)
);
CREATE TABLE registry_sync (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL UNIQUE REFERENCES source(id) ON DELETE CASCADE,
  sync_status text NOT NULL DEFAULT 'IN_PROGRESS' CHECK (sync_status IN ('IN_PROGRESS','COMPLETED','FAILED')),
  error_msg text,
  started_at timestamptz,
  ended_at timestamptz,
  last_success_at timestamptz,
  attempt_count int NOT NULL DEFAULT 0,
  last_sync_hash text,
  last_applied_filter_hash text,
  server_count int NOT NULL DEFAULT 0
);
CREATE TABLE registry_entry (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES source(id) ON DELETE CASCADE,
  entry_type text NOT NULL DEFAULT 'MCP' CHECK (entry_type IN ('MCP','SKILL','PLUGIN')),
  name text NOT NULL,
  claims jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_id, entry_type, name)
);
CREATE TABLE entry_version (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  entry_id uuid NOT NULL REFERENCES registry_entry(id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES source(id) ON DELETE CASCADE,
  name text NOT NULL,
  version text NOT NULL,
  title text,
  description text,
  server jsonb NOT NULL,
  is_latest boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (entry_id, version)
);
`,
    down: `
DROP TABLE IF EXISTS entry_version;
DROP TABLE IF EXISTS registry_entry;
DROP TABLE IF EXISTS registry_sync;
DROP TABLE IF EXISTS registry_source;
DROP TABLE IF EXISTS registry;
DROP TABLE IF EXISTS source;
`,
  },
  {
    version: 2,
    name: 'read_path_indexes',
    up: `
CREATE INDEX entry_version_name_version_idx ON entry_version (name, version);
CREATE INDEX entry_version_source_name_idx ON entry_version (source_id, name, version);
CREATE INDEX registry_source_position_idx ON registry_source (registry_id, position, source_id);
`,
    down: `
DROP INDEX IF EXISTS registry_source_position_idx;
DROP INDEX IF EXISTS entry_version_source_name_idx;
DROP INDEX IF EXISTS entry_version_name_version_idx;
`,
  },
];

/** Any constant: the lock every replica takes while migrating. */
const MIGRATION_LOCK = 7_310_241;

/**
 * Takes the migration lock for the rest of the transaction, then makes sure the bookkeeping table exists.
 * The table is created under the lock: two `CREATE TABLE IF NOT EXISTS` racing on a fresh database
 * (replicas starting together) can both pass the check, and the second then fails on PostgreSQL's
 * catalog (a duplicate pg_type row).
 */
async function lockAndPrepare(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  await q.query('CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL DEFAULT false)');
}

async function ensureTable(db: Db): Promise<void> {
  await db.tx(lockAndPrepare);
}

export async function currentVersion(db: Db): Promise<number> {
  await ensureTable(db);
  const rows = await db.query<{ v: number | null }>('SELECT max(version)::int AS v FROM schema_migrations');
  return rows[0]?.v ?? 0;
}

/** Applies every pending step; returns the versions applied. */
export async function migrateUp(db: Db): Promise<number[]> {
  return db.tx(async (q) => {
    await lockAndPrepare(q);
    const rows = await q.query<{ v: number | null }>('SELECT max(version)::int AS v FROM schema_migrations');
    const current = rows[0]?.v ?? 0;
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      for (const stmt of statements(m.up)) await q.query(stmt);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** Reverts the last `steps` applied steps; returns the versions reverted. */
export async function migrateDown(db: Db, steps: number): Promise<number[]> {
  return db.tx(async (q) => {
    await lockAndPrepare(q);
    const rows = await q.query<{ version: number }>('SELECT version::int AS version FROM schema_migrations ORDER BY version DESC');
    const reverted: number[] = [];
    for (const r of rows.slice(0, steps)) {
      const m = MIGRATIONS.find((x) => x.version === r.version);
      if (!m) throw new Error(`unknown migration version ${r.version} in schema_migrations`);
      for (const stmt of statements(m.down)) await q.query(stmt);
      await q.query('DELETE FROM schema_migrations WHERE version = $1', [m.version]);
      reverted.push(m.version);
    }
    return reverted;
  });
}

/** Splits a migration on `;` at line ends (the SQL here has no functions or quoted semicolons). */
function statements(sql: string): string[] {
  return sql
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter((s) => s.length > 0);
}
