/**
 * Must-show 3: twenty `thv run` / `thv stop` commands racing on different names leave twenty consistent
 * state files (valid JSON, the expected status, no temporary or lock files, no stray proxies).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ECHO_SERVER } from '../helpers/thv.js';
import { isAlive, listJson, sandbox, type Sandbox } from './helpers.js';

const N = 20;

describe('concurrent thv commands', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await sandbox();
  });
  after(async () => sb.cleanup());

  it(`leaves ${N} consistent state files after racing run and stop commands`, { timeout: 240_000 }, async () => {
    const names = Array.from({ length: N }, (_, i) => `race-${String(i).padStart(2, '0')}`);
    const pids = new Map<string, number>();
    // Every stop starts the moment its own run returns, so stops race with the runs still in flight.
    await Promise.all(
      names.map(async (name) => {
        await sb.ok(['run', '--name', name, ECHO_SERVER], 180_000);
        const status = await sb.statusFile(name);
        assert.equal(status?.['status'], 'running', `${name} after run`);
        pids.set(name, Number(status?.['process_id']));
        await sb.ok(['stop', name], 60_000);
      }),
    );

    const files = await sb.files();
    const stray = files.filter((f) => /\.tmp-|\.lock$|\.corrupted$/.test(f));
    assert.deepEqual(stray, [], 'no temporary, lock or corrupt files');
    for (const name of names) {
      const status = JSON.parse(await readFile(join(sb.root, 'data/toolhive/statuses', `${name}.json`), 'utf8')) as Record<string, unknown>;
      assert.equal(status['status'], 'stopped', name);
      assert.equal(status['process_id'], 0, name);
      assert.ok(Date.parse(String(status['created_at'])) <= Date.parse(String(status['updated_at'])), name);
      const config = JSON.parse(await readFile(join(sb.root, 'state/toolhive/runconfigs', `${name}.json`), 'utf8')) as Record<string, unknown>;
      assert.equal(config['name'], name);
      assert.equal(config['schema_version'], 'v0.1.0');
      assert.equal(isAlive(pids.get(name)!), false, `${name}'s proxy is gone`);
    }
    const ports = new Set<number>();
    const listed = await listJson(sb);
    assert.deepEqual(listed.map((w) => w.name), names);
    for (const w of listed) {
      assert.equal(w.status, 'stopped');
      ports.add(Number(new URL(w.url).port));
    }
    assert.equal(ports.size, N, 'every workload got its own port');

    // …and the same for twenty removals racing each other.
    await Promise.all(names.map((name) => sb.ok(['rm', name], 60_000)));
    assert.deepEqual((await sb.files()).filter((f) => f !== 'state/toolhive/groups/default.json'), []);
  });
});
