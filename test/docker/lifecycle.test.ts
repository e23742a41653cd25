/**
 * Container workloads through the lifecycle commands (detached `thv run`, `list`, `stop`, `start`, `rm`):
 * the engine's containers carry ToolHive's labels, and `rm` leaves no container or network behind.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { conformanceImage, ensureEngine, toolhiveResources } from '../helpers/docker.js';
import { callTool, listJson, sandbox, urlFrom, waitFor, type Sandbox } from '../workloads/helpers.js';

describe('container workload lifecycle', () => {
  let sb: Sandbox;
  let image: string;
  before(async () => {
    image = await conformanceImage();
    sb = await sandbox({ THV_RUNTIME: 'docker' });
  });
  after(async () => {
    await sb?.cleanup();
  });

  it('run, list, stop, start and rm an HTTP server container; rm leaves nothing behind', async () => {
    const docker = await ensureEngine();
    const name = `lc-${process.pid}`;
    const run = await sb.ok(['run', '--isolate-network=false', '--transport', 'streamable-http', '--name', name, image, '--', '--http'], 120_000);
    const url = urlFrom(run.stdout);
    assert.match(await callTool(url, 'test_simple_text'), /.+/);

    const listed = await listJson(sb);
    assert.equal(listed.find((w) => w.name === name)?.status, 'running');
    const containers = await docker.listContainers({ all: true, filters: { label: ['toolhive=true', `toolhive-basename=${name}`] } });
    assert.equal(containers.length, 1);
    const labels = containers[0]!.Labels;
    assert.equal(labels['toolhive-name'], name);
    assert.equal(labels['toolhive-transport'], 'streamable-http');
    assert.ok(containers[0]!.Ports.every((p) => !p.IP || p.IP === '127.0.0.1'), 'ports are published on 127.0.0.1 only');

    await sb.ok(['stop', name]);
    await waitFor('no container after stop', async () => (await toolhiveResources(docker, name)).containers.length === 0);

    const again = await sb.ok(['start', name], 120_000);
    assert.match(await callTool(urlFrom(again.stdout), 'test_simple_text'), /.+/);

    await sb.ok(['rm', name]);
    const left = await waitFor('nothing left after rm', async () => {
      const r = await toolhiveResources(docker, name);
      return r.containers.length === 0 && r.networks.length === 0 ? r : undefined;
    });
    assert.deepEqual(left, { containers: [], networks: [] });
    assert.equal((await listJson(sb)).find((w) => w.name === name), undefined);
  });
});
