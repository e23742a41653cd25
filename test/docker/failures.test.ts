/**
 * Container-level failures are seen: a stdio server container removed by hand ends its session with an
 * error (the engine's wait API reports it), and the next session gets a fresh container; a container
 * killed for running out of memory is reported as such.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName } from '../helpers/docker.js';
import { openSession, post, startThv, type RunningThv } from '../helpers/thv.js';
import { callTool, waitFor } from '../workloads/helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('container failures', () => {
  const name = testWorkloadName('fail');
  let docker: Docker;
  let thv: RunningThv;
  before(async () => {
    docker = await ensureEngine();
    const base = await nodeBaseImage();
    thv = await startThv(
      ['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--stdio-sessions', 'shared', '--name', name, '-v', `${FIXTURES}:/fixtures:ro`, base, '--', 'node', '/fixtures/probe-server.mjs'],
      { timeoutMs: 120_000 },
    );
  });
  after(async () => {
    try {
      if (thv) assert.equal(await thv.stop(), 0);
    } finally {
      await removeWorkloadResources(docker, name);
    }
  });

  it('a container removed by hand is noticed, and a new one serves the next session', async () => {
    const sid = await openSession(thv.url);
    const [container] = await docker.listContainers({ filters: { label: [`toolhive-basename=${name}`] } });
    assert.ok(container, 'the server container runs');
    await docker.getContainer(container.Id).remove({ force: true });
    // The old session is gone with its server.
    await waitFor('the session to end', async () => {
      const res = await post(thv.url, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { 'mcp-session-id': sid });
      await res.text();
      return res.status !== 200;
    });
    assert.match(thv.stderr(), /the MCP server container was removed/);
    // A new session gets a new container.
    assert.match(await callTool(thv.url, 'whoami'), /^65534:65534$|^0:0$/);
    const now = await docker.listContainers({ filters: { label: [`toolhive-basename=${name}`] } });
    assert.equal(now.length, 1);
    assert.notEqual(now[0]!.Id, container.Id);
  });

  it('a container killed for running out of memory is reported as such, and the request gets a 502', async () => {
    const sid = await openSession(thv.url);
    const [container] = await docker.listContainers({ filters: { label: [`toolhive-basename=${name}`] } });
    assert.ok(container, 'the server container runs');
    // A 48 MiB limit set on the running container; the hog tool then allocates past it.
    await docker.getContainer(container.Id).update({ Memory: 48 * 1024 * 1024, MemorySwap: 48 * 1024 * 1024 });
    const res = await post(thv.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'hog', arguments: {} } }, { 'mcp-session-id': sid });
    const body = await res.text();
    assert.equal(res.status, 502, body);
    assert.match(body, /out of memory/);
    await waitFor('the OOM kill to be logged', async () => /killed for running out of memory/.test(thv.stderr()));
    // The workload goes on: the next session gets a new container.
    assert.match(await callTool(thv.url, 'whoami'), /^65534:65534$|^0:0$/);
  });
});
