/**
 * `--isolate-network` on a real engine: the workload (a probe MCP server) sits on an internal network and
 * reaches out only through the egress sidecar, which enforces the permission profile's allow list. The
 * destinations are two containers on the `toolhive-external` network (so no traffic leaves the machine).
 * Afterwards no sidecar and no internal network are left.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ensureEngine, nodeBaseImage, toolhiveResources } from '../helpers/docker.js';
import { startThv, type RunningThv } from '../helpers/thv.js';
import { callTool, waitFor } from '../workloads/helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const TARGET_SERVER = "require('http').createServer((q,s)=>s.end('target-ok '+q.socket.localPort)).listen(8080).unref;require('http').createServer((q,s)=>s.end('target-ok '+q.socket.localPort)).listen(9090)";

async function startTarget(docker: Docker, image: string, name: string): Promise<void> {
  await docker.getContainer(name).remove({ force: true }).catch(() => {});
  const c = await docker.createContainer({
    name,
    Image: image,
    Cmd: ['node', '-e', TARGET_SERVER],
    User: '65534:65534',
    HostConfig: { NetworkMode: 'toolhive-external', AutoRemove: true, CapDrop: ['ALL'] },
  });
  await c.start();
}

describe('network isolation with an egress allow list', () => {
  const allowed = `thv-test-allowed-${process.pid}`;
  const other = `thv-test-other-${process.pid}`;
  const name = `iso-${process.pid}`;
  let docker: Docker;
  let dir: string;
  let thv: RunningThv | undefined;
  before(async () => {
    docker = await ensureEngine();
    const base = await nodeBaseImage();
    try {
      await docker.createNetwork({ Name: 'toolhive-external', Driver: 'bridge', Labels: { toolhive: 'true', 'toolhive-name': 'toolhive-external' } });
    } catch {
      // exists
    }
    await startTarget(docker, base, allowed);
    await startTarget(docker, base, other);
    dir = await mkdtemp(join(tmpdir(), 'thv-iso-'));
    const profile = join(dir, 'profile.json');
    await writeFile(profile, JSON.stringify({ network: { outbound: { allow_host: [allowed], allow_port: [8080] } } }));
    thv = await startThv(
      ['run', '--runtime', 'docker', '--foreground', '--transport', 'stdio', '--name', name, '--permission-profile', profile, '-v', `${FIXTURES}:/fixtures:ro`, base, '--', 'node', '/fixtures/probe-server.mjs'],
      { timeoutMs: 180_000, env: { THV_HELPER_BASE_IMAGE: base } },
    );
  });
  after(async () => {
    if (thv) await thv.stop();
    for (const c of [allowed, other]) await docker.getContainer(c).remove({ force: true }).catch(() => {});
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('an allowed host:port is reachable through the egress proxy', async () => {
    const r = await callTool(thv!.url, 'fetch', { url: `http://${allowed}:8080/` });
    assert.equal(r, '200 target-ok 8080');
  });

  it('the allowed host on another port is refused', async () => {
    const r = await callTool(thv!.url, 'fetch', { url: `http://${allowed}:9090/` });
    assert.match(r, /^403 /);
  });

  it('another host is refused', async () => {
    const r = await callTool(thv!.url, 'fetch', { url: `http://${other}:8080/` });
    assert.match(r, /^403 /);
  });

  it('going around the proxy fails: the workload network has no route out', async () => {
    const r = await callTool(thv!.url, 'fetch', { url: `http://${allowed}:8080/`, direct: true });
    assert.doesNotMatch(r, /target-ok/);
  });

  it('the workload containers carry the isolation label; stopping removes sidecars and the internal network', async () => {
    const running = await docker.listContainers({ all: true, filters: { label: ['toolhive=true'] } });
    const mine = running.filter((c) => c.Names.some((n) => n.startsWith(`/${name}-`)));
    assert.ok(mine.some((c) => c.Names.includes(`/${name}-egress`)), 'the egress sidecar runs');
    const server = mine.find((c) => c.Labels['toolhive-basename'] === name);
    assert.equal(server?.Labels['toolhive-network-isolation'], 'true');
    assert.deepEqual(Object.keys(server?.NetworkSettings?.Networks ?? {}), [`toolhive-${name}-internal`]);
    assert.equal(await thv!.stop(), 0);
    thv = undefined;
    const left = await waitFor('sidecars and network removed', async () => {
      const r = await toolhiveResources(docker, name);
      return r.containers.length === 0 && r.networks.length === 0 ? r : undefined;
    });
    assert.deepEqual(left, { containers: [], networks: [] });
  });
});
