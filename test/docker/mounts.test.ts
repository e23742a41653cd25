/**
 * Mounts in containers, seen from inside the workload (a probe MCP server in the locally built node
 * image): a `:ro` volume cannot be written, a writable one can, a path listed in `.thvignore` (the
 * directory's own, or the global `~/.config/toolhive/thvignore` unless `--ignore-globally=false`) is not
 * visible, and the server runs without root capabilities. The first workload runs with network isolation
 * on, as by default.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName } from '../helpers/docker.js';
import { startThv, type RunningThv } from '../helpers/thv.js';
import { callTool } from '../workloads/helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('container mounts and .thvignore', () => {
  const name = testWorkloadName('mounts');
  let dir: string;
  let thv: RunningThv;
  let base: string;
  before(async () => {
    base = await nodeBaseImage();
    dir = await mkdtemp(join(tmpdir(), 'thv-mounts-'));
    await mkdir(join(dir, 'ro/secrets'), { recursive: true });
    await writeFile(join(dir, 'ro/visible.txt'), 'hello');
    await writeFile(join(dir, 'ro/secrets/key.pem'), 'SECRET');
    await writeFile(join(dir, 'ro/token.env'), 'TOKEN=1');
    await writeFile(join(dir, 'ro/.thvignore'), '# hide these\nsecrets/\n*.env\n');
    await writeFile(join(dir, 'ro/global-hidden.txt'), 'GLOBAL');
    await mkdir(join(dir, 'home/.config/toolhive'), { recursive: true });
    await writeFile(join(dir, 'home/.config/toolhive/thvignore'), 'global-hidden.txt\n');
    await mkdir(join(dir, 'rw'));
    await import('node:fs/promises').then((fs) => fs.chmod(join(dir, 'rw'), 0o777));
    thv = await startThv(
      [
        // Network isolation on (the default): mounts and overlays behave the same behind the egress proxy.
        'run', '--runtime', 'docker', '--foreground', '--transport', 'stdio', '--name', name, '--print-resolved-overlays',
        '-v', `${FIXTURES}:/fixtures:ro`, '-v', `${join(dir, 'ro')}:/data:ro`, '-v', `${join(dir, 'rw')}:/out`,
        base, '--', 'node', '/fixtures/probe-server.mjs',
      ],
      { timeoutMs: 180_000, env: { HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config'), THV_HELPER_BASE_IMAGE: base } },
    );
  });
  after(async () => {
    try {
      if (thv) assert.equal(await thv.stop(), 0);
    } finally {
      await removeWorkloadResources(await ensureEngine(), name);
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });

  it('a read-only volume is readable but not writable', async () => {
    assert.equal(await callTool(thv.url, 'read', { path: '/data/visible.txt' }), 'hello');
    const write = await callTool(thv.url, 'write', { path: '/data/new.txt', text: 'x' });
    assert.match(write, /EROFS|read-only/i);
  });

  it('a writable volume is writable', async () => {
    assert.equal(await callTool(thv.url, 'write', { path: '/out/result.txt', text: 'from the container' }), 'written');
    assert.equal(await readFile(join(dir, 'rw/result.txt'), 'utf8'), 'from the container');
  });

  it('paths listed in .thvignore are hidden inside, and the overlays are logged', async () => {
    assert.equal(await callTool(thv.url, 'list', { path: '/data/secrets' }), '');
    assert.equal(await callTool(thv.url, 'read', { path: '/data/token.env' }), '');
    assert.equal(await callTool(thv.url, 'read', { path: '/data/visible.txt' }), 'hello');
    assert.match(thv.stderr(), /hidden by \.thvignore/);
    assert.match(thv.stderr(), /\/data\/secrets/);
  });

  it('the global thvignore hides too, unless --ignore-globally=false', async () => {
    assert.equal(await callTool(thv.url, 'read', { path: '/data/global-hidden.txt' }), '');
    const other = testWorkloadName('mountsnoglobal');
    const second = await startThv(
      [
        'run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--name', other, '--ignore-globally=false',
        '-v', `${FIXTURES}:/fixtures:ro`, '-v', `${join(dir, 'ro')}:/data:ro`, base, '--', 'node', '/fixtures/probe-server.mjs',
      ],
      { timeoutMs: 120_000, env: { HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config') } },
    );
    try {
      assert.equal(await callTool(second.url, 'read', { path: '/data/global-hidden.txt' }), 'GLOBAL');
      // The directory's own .thvignore still applies.
      assert.equal(await callTool(second.url, 'list', { path: '/data/secrets' }), '');
    } finally {
      try {
        assert.equal(await second.stop(), 0);
      } finally {
        await removeWorkloadResources(await ensureEngine(), other);
      }
    }
  });

  it('the server runs with no capabilities and no new privileges', async () => {
    const status = await callTool(thv.url, 'read', { path: '/proc/self/status' });
    assert.match(status, /CapEff:\s+0000000000000000/);
    assert.match(status, /NoNewPrivs:\s+1/);
  });
});
