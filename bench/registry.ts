/**
 * Registry service scale benchmark (issue 7, point 4).
 *
 * For 10,000 and 100,000 server versions it loads a registry through the real sync path (a file
 * source), then measures, in one process and on one connection pool:
 *   - page:  GET /registry/default/v0.1/servers (first page, default limit 30) over HTTP (keep-alive),
 *   - sql:   the bare SQL query behind that page (`listSql`, limit+1 rows) on the same pool,
 * as medians of several rounds. Each measured call starts from the same idle state (a 1 ms pause off
 * the clock before it), so neither side inherits the other's trailing work. Targets: page ≤ 2 × sql at each size, and page(100k) ≤ 2 × page(10k).
 *
 *   node --import tsx bench/registry.ts [--backend postgres|pglite] [--sizes 10000,100000]
 *        [--rounds 7] [--requests 200] [--assert]
 *
 * PostgreSQL comes from THV_TEST_PG_URL (default: the test role scripts/services.sh creates); each
 * size gets a fresh database that is dropped afterwards.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createLogger } from '../src/logging.js';
import { parseConfig } from '../src/registry-server/config.js';
import { listSql } from '../src/registry-server/store/read.js';
import { startRegistry } from '../src/registry-server/server.js';
import { DEFAULT_LIMIT } from '../src/registry-server/api/v01.js';
import { createTestDatabase, makeServers, registryDocument } from '../test/registry-server/helpers.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const backend = opt('backend', 'postgres');
const sizes = opt('sizes', '10000,100000').split(',').map(Number);
const rounds = Number(opt('rounds', '7'));
const perRound = Number(opt('requests', '200'));
const doAssert = args.includes('--assert');

const settle = () => new Promise((r) => setTimeout(r, 1));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Result {
  size: number;
  syncMs: number;
  pageMs: number;
  sqlMs: number;
  floorMs: number;
}

async function measure(size: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'thv-bench-registry-'));
  const tdb = backend === 'postgres' ? await createTestDatabase() : undefined;
  const dbYaml = tdb ? tdb.yaml : `database: ${join(dir, 'pglite')}\n`;
  // 4 versions per name, like a registry with some history.
  writeFileSync(join(dir, 'registry.json'), registryDocument(makeServers(size / 4, 'io.bench', 4)));
  const config = parseConfig(
    `sources:\n  - name: big\n    file: { path: ${join(dir, 'registry.json')} }\n    syncPolicy: { interval: 24h }\nregistries:\n  - name: default\n    sources: [big]\nauth: { mode: anonymous }\n${dbYaml}`,
    {},
  );
  const logger = createLogger();
  logger.level = 'silent';
  const reg = await startRegistry({ config, logger, address: '127.0.0.1:0', internalAddress: '127.0.0.1:0', noSync: true });
  const agent = new Agent({ connections: 1, pipelining: 1 });
  try {
    const t0 = performance.now();
    const outcome = await reg.sync.syncOne('big', true);
    const syncMs = performance.now() - t0;
    if (outcome !== 'synced') throw new Error(`sync of ${size} versions: ${outcome}`);
    await reg.db.query('ANALYZE');
    const { sql, params } = listSql({ limit: DEFAULT_LIMIT }, 'default', DEFAULT_LIMIT + 1, undefined);
    const url = `${reg.url}/registry/default/v0.1/servers`;
    // undici's request(), the lean client: what is timed is the service, not WHATWG fetch's machinery.
    const page = async () => {
      const res = await request(url, { dispatcher: agent });
      const body = (await res.body.json()) as { servers: unknown[] };
      if (res.statusCode !== 200 || body.servers.length !== DEFAULT_LIMIT) throw new Error(`bad page: ${res.statusCode}`);
    };
    // The HTTP floor: a request the service answers without the database (a 404 under /.well-known).
    const floorUrl = `${reg.url}/.well-known/bench-floor`;
    const floor = async () => {
      const res = await request(floorUrl, { dispatcher: agent });
      await res.body.dump();
    };
    const query = async () => {
      const rows = await reg.db.query(sql, params, true);
      if (rows.length !== DEFAULT_LIMIT + 1) throw new Error('bad query');
    };
    // Warm both paths, then alternate rounds so drift on a shared machine hits both alike.
    for (let i = 0; i < 50; i++) {
      await page();
      await query();
    }
    // Each round alternates one query and one page request, so load from other processes on a
    // shared machine falls on both alike; the figure is the median over rounds of per-round medians.
    const pageRounds: number[] = [];
    const sqlRounds: number[] = [];
    const floorRounds: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const pt: number[] = [];
      const st: number[] = [];
      const ft: number[] = [];
      for (let i = 0; i < perRound; i++) {
        // Let the previous request's trailing work (socket bookkeeping, GC) finish off the clock.
        await settle();
        let t = performance.now();
        await query();
        st.push(performance.now() - t);
        await settle();
        t = performance.now();
        await page();
        pt.push(performance.now() - t);
        await settle();
        t = performance.now();
        await floor();
        ft.push(performance.now() - t);
      }
      floorRounds.push(median(ft));
      sqlRounds.push(median(st));
      pageRounds.push(median(pt));
    }
    return { size, syncMs, pageMs: median(pageRounds), sqlMs: median(sqlRounds), floorMs: median(floorRounds) };
  } finally {
    await agent.close();
    await reg.close();
    await reg.db.close().catch(() => undefined);
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Result[] = [];
for (const size of sizes) {
  const r = await measure(size);
  results.push(r);
  console.log(
    `${backend} ${String(size).padStart(7)} versions: sync ${(r.syncMs / 1000).toFixed(1)} s, first page ${r.pageMs.toFixed(3)} ms, bare SQL ${r.sqlMs.toFixed(3)} ms, HTTP floor ${r.floorMs.toFixed(3)} ms, page/sql ${(r.pageMs / r.sqlMs).toFixed(2)}`,
  );
}
let failed = false;
for (const r of results) {
  const ratio = r.pageMs / r.sqlMs;
  const ok = ratio <= 2;
  failed ||= !ok;
  console.log(`page/sql at ${r.size}: ${ratio.toFixed(2)} (target ≤ 2.00) ${ok ? 'PASS' : 'FAIL'}`);
}
if (results.length >= 2) {
  const small = results[0]!;
  const large = results[results.length - 1]!;
  const ratio = large.pageMs / small.pageMs;
  const ok = ratio <= 2;
  failed ||= !ok;
  console.log(`page ${large.size} / page ${small.size}: ${ratio.toFixed(2)} (target ≤ 2.00) ${ok ? 'PASS' : 'FAIL'}`);
}
if (doAssert && failed) process.exitCode = 1;
