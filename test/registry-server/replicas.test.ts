/**
 * Two replicas on one PostgreSQL (issue 7, point 3): they serve the same answers, a source syncs once
 * per interval (not once per replica), and killing the replica that is in the middle of a sync leaves
 * the previous data fully visible; the survivor then completes the sync.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, getJson, listAll, makeServers, registryDocument, spawnCli, until, type TestDatabase } from './helpers.js';

describe('two replicas on one PostgreSQL', () => {
  let dir: string;
  let tdb: TestDatabase;
  let http: Server;
  let doc = registryDocument(makeServers(40));
  const fetches: Array<{ at: number; port: number }> = [];
  let hang: ((res: ServerResponse, port: number) => void) | undefined;
  // While set, fetches wait for it before being answered (so a survivor cannot sync too early).
  let gate: { promise: Promise<void>; open: () => void } | undefined;
  const closeGate = () => {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    gate = { promise, open: () => { gate = undefined; open(); } };
    return gate;
  };
  const replicas: Array<ReturnType<typeof spawnCli>> = [];
  let urls: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-rs-replicas-'));
    tdb = await createTestDatabase();
    http = createServer((req, res) => {
      const port = req.socket.remotePort ?? 0;
      fetches.push({ at: Date.now(), port });
      if (hang) return hang(res, port);
      const served = doc;
      void (gate?.promise ?? Promise.resolve()).then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(served));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const port = (http.address() as AddressInfo).port;
    const cfg = join(dir, 'config.yaml');
    writeFileSync(
      cfg,
      `sources:\n  - name: remote\n    file: { url: "http://127.0.0.1:${port}/registry.json", timeout: 60s }\n    syncPolicy: { interval: 2s }\nregistries:\n  - name: default\n    sources: [remote]\nauth: { mode: anonymous }\n${tdb.yaml}`,
    );
    // The first replica migrates and reconciles; the second starts on the same database at once.
    for (let i = 0; i < 2; i++) replicas.push(spawnCli(['serve', '--config', cfg, '--address', '127.0.0.1:0', '--internal-address', '127.0.0.1:0']));
    urls = (await Promise.all(replicas.map((r) => r.ready))).map((r) => r.url);
    await until('first sync', async () => (await listAll(`${urls[0]}/registry/default`)).servers.length === 40, 30_000);
  });

  after(async () => {
    for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    hang = undefined;
    gate?.open();
    http?.closeAllConnections();
    await new Promise((r) => http?.close(r));
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serve the same answers', async () => {
    const a = await listAll(`${urls[0]}/registry/default`);
    const b = await listAll(`${urls[1]}/registry/default`);
    assert.deepEqual(a, b);
    assert.equal(a.servers.length, 40);
  });

  it('sync a source once per interval, not once per replica', async () => {
    const start = Date.now();
    const from = fetches.length;
    // Watch for 7 s: with a 2 s interval that is at most 4 syncs (boundary + jitter), where two
    // uncoordinated replicas would make about 7.
    await new Promise((r) => setTimeout(r, 7000));
    const n = fetches.slice(from).length;
    const elapsed = (Date.now() - start) / 1000;
    assert.ok(n >= 2, `expected periodic syncs, saw ${n}`);
    assert.ok(n <= Math.floor(elapsed / 2) + 1, `${n} fetches in ${elapsed.toFixed(1)} s with a 2 s interval: more than once per interval`);
    // No two fetches closer together than the interval minus scheduling slack.
    const times = fetches.slice(from).map((f) => f.at);
    for (let i = 1; i < times.length; i++) assert.ok(times[i]! - times[i - 1]! > 1500, `fetches ${times[i]! - times[i - 1]!} ms apart`);
  });

  it('killing the replica in the middle of a sync leaves the previous data fully visible', async () => {
    const before = await listAll(`${urls[0]}/registry/default`);
    doc = registryDocument(makeServers(55));
    const g = closeGate();
    // The next fetch gets its headers and half a body, then nothing: the sync is under way.
    let victimPort = 0;
    const started = new Promise<void>((resolve) => {
      hang = (res, port) => {
        hang = undefined; // one request only: the survivor's retry waits at the gate instead
        victimPort = port;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(doc.slice(0, doc.length >> 1));
        resolve();
      };
    });
    await started;
    // Which replica is fetching? The one owning the client end of that connection.
    const ss = execFileSync('ss', ['-tnpH', `sport = :${victimPort}`], { encoding: 'utf8' });
    const pid = Number(/pid=(\d+)/.exec(ss)?.[1]);
    const victim = replicas.findIndex((r) => r.child.pid === pid);
    assert.ok(victim >= 0, `fetching replica not found (pid ${pid}; ss: ${ss.trim()})`);
    const status = await getJson(`${urls[victim]}/v1/sources/remote`);
    assert.equal(status.body.syncStatus.phase, 'syncing');
    replicas[victim]!.child.kill('SIGKILL');
    await replicas[victim]!.exited;
    const survivor = urls[1 - victim]!;
    // Previous data, complete, on the survivor.
    assert.deepEqual(await listAll(`${survivor}/registry/default`), before);
    // Now let fetches through: the survivor takes the source over (the dead session's lock is gone).
    g.open();
    await until('survivor completes the sync', async () => (await listAll(`${survivor}/registry/default`)).servers.length === 55, 30_000);
    const after = await getJson(`${survivor}/v1/sources/remote`);
    assert.equal(after.body.syncStatus.serverCount, 55);
  });

  it('killing the replica in the middle of its write transaction leaves the previous data fully visible', async () => {
    const survivorIndex = replicas.findIndex((r) => r.child.exitCode === null && r.child.signalCode === null);
    const survivor = urls[survivorIndex]!;
    // Restart a second replica so there is one to kill.
    const cfgArgs = replicas[survivorIndex]!.child.spawnargs.slice(replicas[survivorIndex]!.child.spawnargs.indexOf('serve'));
    const fresh = spawnCli(cfgArgs);
    replicas.push(fresh);
    const freshUrl = (await fresh.ready).url;
    await until('the survivor is idle again', async () => (await getJson(`${survivor}/v1/sources/remote`)).body.syncStatus.phase === 'complete');
    const before = await getJson(`${survivor}/registry/default/v0.1/servers?limit=1000`);
    assert.equal(before.body.metadata.count, 55);
    // A big document makes the write transaction last long enough to be caught in the act.
    doc = registryDocument(makeServers(30_000));
    const admin = new pg.Client({ connectionString: tdb.url });
    await admin.connect();
    try {
      const writer = await until(
        'a replica inside its write transaction',
        async () => {
          const r = await admin.query(
            `SELECT client_port FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
               AND query LIKE ANY (ARRAY['DELETE FROM registry_entry%', 'INSERT INTO registry_entry%', 'DELETE FROM entry_version%', 'INSERT INTO entry_version%'])`,
          );
          return r.rows[0]?.client_port as number | undefined;
        },
        60_000,
      );
      const ss = execFileSync('ss', ['-tnpH', `sport = :${writer}`], { encoding: 'utf8' });
      const pid = Number(/pid=(\d+)/.exec(ss)?.[1]);
      const victim = replicas.find((r) => r.child.pid === pid);
      assert.ok(victim, `writing replica not found (pid ${pid})`);
      const g = closeGate();
      victim.child.kill('SIGKILL');
      await victim.exited;
      const other = victim === fresh ? survivor : freshUrl;
      // Nothing of the half-written transaction is visible: the previous 55 servers, exactly.
      const after = await getJson(`${other}/registry/default/v0.1/servers?limit=1000`);
      assert.equal(after.body.metadata.count, 55);
      assert.deepEqual(after.body.servers.map((s: any) => s.server.name), before.body.servers.map((s: any) => s.server.name));
      // The other replica takes the source over and completes the sync.
      g.open();
      await until('the other replica completes the big sync', async () => (await getJson(`${other}/v1/sources/remote`)).body.syncStatus.serverCount === 30_000, 120_000);
    } finally {
      await admin.end();
    }
  });
});
