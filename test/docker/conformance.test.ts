/**
 * MCP conformance through thv with the servers in real containers (Docker Engine, images built locally
 * by test/helpers/docker.ts): a stdio server attached through the engine's attach API, and a Streamable
 * HTTP server whose port is published on 127.0.0.1. Afterwards no container of the workload is left.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runConformance } from '../helpers/conformance.js';
import { startThv } from '../helpers/thv.js';
import { conformanceImage, ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName, workloadResources } from '../helpers/docker.js';

function assertAllPassed(result: Awaited<ReturnType<typeof runConformance>>): void {
  assert.deepEqual(result.failures, [], `failed checks:\n${result.failures.join('\n')}`);
  assert.equal(result.failed, 0);
  assert.ok(result.total >= 40, `only ${result.total} checks ran`);
}

/** Lists every container (labelled or not) and network of the workload: none may be left. */
async function assertNoContainers(name: string): Promise<void> {
  const docker = await ensureEngine();
  // thv removes containers as they end; poll briefly.
  const deadline = Date.now() + 15_000;
  let left = await workloadResources(docker, name);
  while (left.containers.length + left.networks.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    left = await workloadResources(docker, name);
  }
  assert.deepEqual(left.containers, [], `containers left behind: ${left.containers.join(', ')}`);
  assert.deepEqual(left.networks, [], `networks left behind: ${left.networks.join(', ')}`);
}

describe('MCP conformance suite through thv, servers in containers', () => {
  let image: string;
  const names = [testWorkloadName('confstdio'), testWorkloadName('confhttp')];
  before(async () => {
    image = await conformanceImage();
  });
  // Whatever a failed or interrupted test left (the leak checks below are the real assertions).
  after(async () => {
    const docker = await ensureEngine();
    for (const n of names) await removeWorkloadResources(docker, n);
  });

  it('stdio server in a container behind the stdio bridge: every check passes', async () => {
    const name = names[0]!;
    const thv = await startThv(['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--name', name, image, '--', '--stdio'], { timeoutMs: 120_000 });
    try {
      const result = await runConformance(thv.url, { timeoutMs: 600_000 });
      assertAllPassed(result);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
    await assertNoContainers(name);
  });

  it('Streamable HTTP server in an isolated container (ingress sidecar) behind the transparent proxy: every check passes', async () => {
    const name = names[1]!;
    // Isolation on (the default): the port is published by the ingress sidecar, which forwards to the server.
    const thv = await startThv(['run', '--runtime', 'docker', '--foreground', '--transport', 'streamable-http', '--name', name, image, '--', '--http'], {
      timeoutMs: 120_000,
      env: { THV_HELPER_BASE_IMAGE: await nodeBaseImage() },
    });
    try {
      const result = await runConformance(thv.url, { timeoutMs: 600_000 });
      assertAllPassed(result);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
    await assertNoContainers(name);
  });
});
