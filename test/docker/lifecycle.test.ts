/**
 * Container workloads through the lifecycle commands (detached `thv run`, `list`, `logs`, `stop`,
 * `start`, `rm`) with network isolation on (the default), so each workload has a server container, the
 * egress and ingress helper containers and an internal network:
 *  - the containers carry ToolHive's labels and run with least privilege; `thv logs` shows the server's output;
 *  - a server container killed by hand is seen, and the restart policy brings the workload back;
 *  - a killed proxy leaves its containers in the engine; `thv list` reports the workload truthfully and
 *    `thv start` clears the leftovers (found by label) and serves again;
 *  - `stop` and `rm` leave no container, helper container or network behind (listed from the engine, by
 *    label and by name).
 * Restart delays are shortened through THV_RESTART_BACKOFF_MS / THV_HEALTH_INTERVAL_MS.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { conformanceImage, ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName, workloadResources } from '../helpers/docker.js';
import { callTool, isAlive, listJson, sandbox, urlFrom, waitFor, type Sandbox } from '../workloads/helpers.js';

const FAST_RESTARTS = { THV_RESTART_BACKOFF_MS: '100', THV_RESTART_MAX_BACKOFF_MS: '400', THV_HEALTH_INTERVAL_MS: '200' };

describe('container workload lifecycle (isolated HTTP server)', () => {
  const name = testWorkloadName('lc');
  let docker: Docker;
  let sb: Sandbox;
  let image: string;
  let url: string;

  /** The server container (not a helper): labelled with the workload as base name, not auxiliary. */
  async function serverContainers(): Promise<Docker.ContainerInfo[]> {
    const all = await docker.listContainers({ all: true, filters: { label: ['toolhive=true', `toolhive-basename=${name}`] } });
    return all.filter((c) => c.Labels['toolhive-auxiliary-workload'] !== 'true');
  }

  async function assertNothingLeft(after: string): Promise<void> {
    const left = await waitFor(`nothing of the workload left after ${after}`, async () => {
      const r = await workloadResources(docker, name);
      return r.containers.length === 0 && r.networks.length === 0 ? r : undefined;
    }, 30_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await workloadResources(docker, name))}`);
    });
    assert.deepEqual(left, { containers: [], networks: [] });
  }

  before(async () => {
    docker = await ensureEngine();
    image = await conformanceImage();
    sb = await sandbox({ THV_RUNTIME: 'docker', THV_HELPER_BASE_IMAGE: await nodeBaseImage(), ...FAST_RESTARTS });
  });
  after(async () => {
    try {
      await sb?.cleanup();
    } finally {
      // Runs even when a test failed: the killed proxies' containers must not outlive the run.
      await removeWorkloadResources(docker, name);
    }
  });

  it('runs detached in a labelled, least-privileged container behind the helper containers; logs show its output', async () => {
    const run = await sb.ok(['run', '--transport', 'streamable-http', '--name', name, image, '--', '--http'], 180_000);
    url = urlFrom(run.stdout);
    assert.match(await callTool(url, 'test_simple_text'), /.+/);
    assert.equal((await listJson(sb)).find((w) => w.name === name)?.status, 'running');

    const r = await workloadResources(docker, name);
    const [server, ...others] = await serverContainers();
    assert.ok(server, `no server container among ${r.containers.join(', ')}`);
    assert.equal(others.length, 0);
    const serverName = server.Names[0]!.replace(/^\//, '');
    assert.deepEqual(r.containers, [`${name}-egress`, `${name}-ingress`, serverName].sort());
    assert.deepEqual(r.networks, [`toolhive-${name}-internal`]);
    assert.equal(server.Labels['toolhive'], 'true');
    assert.equal(server.Labels['toolhive-name'], name);
    assert.equal(server.Labels['toolhive-transport'], 'streamable-http');
    assert.equal(server.Labels['toolhive-network-isolation'], 'true');
    const inspected = await docker.getContainer(server.Id).inspect();
    assert.deepEqual(inspected.HostConfig.CapDrop, ['ALL']);
    assert.equal(inspected.HostConfig.Privileged, false);
    assert.ok(inspected.HostConfig.SecurityOpt?.includes('no-new-privileges:true'));
    assert.deepEqual(Object.keys(inspected.NetworkSettings.Networks), [`toolhive-${name}-internal`]);
    // Only the ingress helper publishes a port, on 127.0.0.1 only.
    const ingress = (await docker.listContainers({ filters: { name: [`${name}-ingress`] } }))[0]!;
    assert.ok(ingress.Ports.length > 0 && ingress.Ports.every((p) => !p.PublicPort || p.IP === '127.0.0.1'), JSON.stringify(ingress.Ports));
    assert.ok(server.Ports.every((p) => !p.PublicPort), 'the isolated server publishes nothing itself');

    const logs = await sb.ok(['logs', name]);
    assert.match(logs.stdout, /\[conformance-server\] listening on http:\/\//);
  });

  it('a server container killed by hand is seen and the restart policy brings the workload back', async () => {
    const [before] = await serverContainers();
    await docker.getContainer(before!.Id).kill();
    await waitFor(
      'a new server container answering on the same URL',
      async () => {
        const [now] = await serverContainers();
        if (!now || now.Id === before!.Id) return undefined;
        return (await callTool(url, 'test_simple_text').catch(() => '')) !== '' ? now : undefined;
      },
      90_000,
    );
    assert.equal((await listJson(sb)).find((w) => w.name === name)?.status, 'running');
    const proxyLog = (await sb.ok(['logs', '--proxy', name])).stdout;
    assert.match(proxyLog, /Server exited, restarting/);
    // The killed container is not left behind.
    assert.equal((await docker.listContainers({ all: true, filters: { id: [before!.Id] } })).length, 0);
  });

  it('a killed proxy leaves its containers; list reports it, start clears them (found by label) and serves again', async () => {
    const w = (await listJson(sb)).find((x) => x.name === name)!;
    process.kill(w.process_id, 'SIGKILL');
    await waitFor('the proxy to die', async () => !isAlive(w.process_id));
    const [orphan] = await serverContainers();
    assert.equal(orphan?.State, 'running', 'the server container outlives its proxy');

    const listed = (await listJson(sb)).find((x) => x.name === name);
    assert.equal(listed?.status, 'unhealthy');
    assert.match(listed!.status_context, /proxy process not running/);

    const start = await sb.ok(['start', name], 180_000);
    assert.equal(urlFrom(start.stdout), url);
    assert.match(await callTool(url, 'test_simple_text'), /.+/);
    const now = await serverContainers();
    assert.equal(now.length, 1);
    assert.notEqual(now[0]!.Id, orphan!.Id);
  });

  it('stop leaves nothing; start serves again; rm leaves no container, helper container or network', async () => {
    await sb.ok(['stop', name], 60_000);
    await assertNothingLeft('stop');
    assert.equal((await listJson(sb)).find((w) => w.name === name)?.status, 'stopped');

    const again = await sb.ok(['start', name], 180_000);
    assert.match(await callTool(urlFrom(again.stdout), 'test_simple_text'), /.+/);
    assert.equal((await workloadResources(docker, name)).containers.length, 3);

    await sb.ok(['rm', name], 60_000);
    await assertNothingLeft('rm');
    assert.equal((await listJson(sb)).find((w) => w.name === name), undefined);
    assert.equal(existsSync(join(sb.root, 'data', 'toolhive', 'logs', `${name}.log`)), false);
  });
});
