/** `thv-registry-api migrate up|down` against real PostgreSQL, and the schema each step leaves. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, spawnCli, type TestDatabase } from './helpers.js';

async function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const cli = spawnCli(args);
  let out = '';
  cli.child.stdout!.on('data', (d) => (out += d));
  const code = await cli.exited;
  return { code, out, err: cli.stderr() };
}

describe('migrate up / down', () => {
  let dir: string;
  let tdb: TestDatabase;
  let cfg: string;
  const tables = async () => {
    const c = new pg.Client({ connectionString: tdb.url });
    await c.connect();
    const r = await c.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
    const i = await c.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE '%_idx' ORDER BY 1`);
    await c.end();
    return { tables: r.rows.map((x) => x.tablename), indexes: i.rows.map((x) => x.indexname) };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-rs-migrate-'));
    tdb = await createTestDatabase();
    cfg = join(dir, 'config.yaml');
    writeFileSync(cfg, `sources: [{name: m, managed: {}}]\nregistries: [{name: r, sources: [m]}]\nauth: {mode: anonymous}\n${tdb.yaml}`);
  });
  after(async () => {
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies, reverts step by step, refuses an unbounded down', async () => {
    const up = await run(['migrate', '--config', cfg, 'up', '--yes']);
    assert.equal(up.code, 0, up.err);
    assert.match(up.out, /applied migrations: 1, 2/);
    const t = await tables();
    assert.deepEqual(t.tables, ['entry_version', 'registry', 'registry_entry', 'registry_source', 'registry_sync', 'schema_migrations', 'source']);
    assert.equal(t.indexes.length, 3);

    const noSteps = await run(['migrate', '--config', cfg, 'down', '--yes']);
    assert.equal(noSteps.code, 2);
    assert.match(noSteps.err, /--num-steps flag is required for down migrations \(safety measure\)/);

    const down = await run(['migrate', '--config', cfg, 'down', '--yes', '--num-steps', '1']);
    assert.equal(down.code, 0, down.err);
    assert.match(down.out, /reverted migrations: 2/);
    assert.deepEqual((await tables()).indexes, []);

    const again = await run(['migrate', '--config', cfg, 'up', '--yes']);
    assert.match(again.out, /applied migrations: 2/);
    const none = await run(['migrate', '--config', cfg, 'up', '--yes']);
    assert.match(none.out, /no pending migrations/);
  });
});

describe('replicas migrating a fresh database at the same moment', () => {
  it('apply every step exactly once, with no catalog race (4 at once, 5 fresh databases)', async () => {
    const { parseConfig } = await import('../../src/registry-server/config.js');
    const { openDatabase } = await import('../../src/registry-server/db/open.js');
    const { migrateUp } = await import('../../src/registry-server/db/migrations.js');
    const { createLogger } = await import('../../src/logging.js');
    const logger = createLogger();
    logger.level = 'silent';
    for (let round = 0; round < 5; round++) {
      const tdb = await createTestDatabase();
      try {
        const cfg = parseConfig(`sources: [{name: m, managed: {}}]\nregistries: [{name: r, sources: [m]}]\nauth: {mode: anonymous}\n${tdb.yaml}`, {});
        const dbs = await Promise.all([0, 1, 2, 3].map(() => openDatabase(cfg.database, logger, 'migration')));
        try {
          const applied = await Promise.all(dbs.map((db) => migrateUp(db)));
          // One replica applied everything; the others found nothing left to do.
          assert.equal(applied.filter((a) => a.length > 0).length, 1, JSON.stringify(applied));
        } finally {
          await Promise.all(dbs.map((db) => db.close()));
        }
      } finally {
        await tdb.drop();
      }
    }
  });
});
