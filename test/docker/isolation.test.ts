/**
 * `--isolate-network` on a real engine: the workload (a probe MCP server) sits on an internal network and
 * reaches out only through the egress sidecar, which enforces the permission profile's allow list. The
 * destinations are two containers on the `toolhive-external` network (so no traffic leaves the machine).
 * Afterwards no sidecar and no internal network are left.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName, workloadResources } from '../helpers/docker.js';
import { EXTERNAL_NETWORK, ensureNetwork, removeNetwork } from '../../src/runtime/docker/isolation.js';
import { runThv, startThv, type RunningThv } from '../helpers/thv.js';
import { callTool, waitFor } from '../workloads/helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const TARGET_SERVER = "require('http').createServer((q,s)=>s.end('target-ok '+q.socket.localPort)).listen(8080).unref;require('http').createServer((q,s)=>s.end('target-ok '+q.socket.localPort)).listen(9090)";

async function startTarget(docker: Docker, image: string, name: string): Promise<void> {
  await docker.getContainer(name).remove({ force: true }).catch(() => {});
  // Labelled toolhive=true: thv removes `toolhive-external` with the last toolhive container, and another
  // test file's workload may end meanwhile; the network is (re)created here when that happened.
  const network = await ensureNetwork(docker, EXTERNAL_NETWORK, false);
  const c = await docker.createContainer({
    name,
    Image: image,
    Cmd: ['node', '-e', TARGET_SERVER],
    User: '65534:65534',
    Labels: { toolhive: 'true', 'toolhive-name': name, 'toolhive-basename': name },
    HostConfig: { NetworkMode: network, AutoRemove: true, CapDrop: ['ALL'] },
  });
  await c.start();
}

/** A registry document with one stdio entry, `probe`, published as the local node image, with `permissions`. */
function probeRegistry(image: string, permissions: Record<string, unknown>): Record<string, unknown> {
  return {
    version: '1.0.0',
    meta: { last_updated: '2026-11-01T00:00:00Z' },
    data: {
      servers: [
        {
          name: 'dev.thv.test/probe',
          description: 'probe server in the local node image (isolation test)',
          version: '1.0.0',
          packages: [{ registryType: 'oci', identifier: image, transport: { type: 'stdio' } }],
          _meta: { 'io.modelcontextprotocol.registry/publisher-provided': { 'io.github.stacklok': { [image]: { status: 'Active', tier: 'Community', tools: ['fetch'], permissions } } } },
        },
      ],
    },
  };
}

describe('network isolation with an egress allow list', () => {
  const allowed = testWorkloadName('allowed');
  const other = testWorkloadName('other');
  const name = testWorkloadName('iso');
  let docker: Docker;
  let dir: string;
  let thv: RunningThv | undefined;
  before(async () => {
    docker = await ensureEngine();
    const base = await nodeBaseImage();
    await startTarget(docker, base, allowed);
    await startTarget(docker, base, other);
    dir = await mkdtemp(join(tmpdir(), 'thv-iso-'));
    // The default profile: no --permission-profile, so the registry entry's `permissions` apply (§4.6).
    const registry = join(dir, 'registry.json');
    await writeFile(registry, JSON.stringify(probeRegistry(base, { network: { outbound: { allow_host: [allowed], allow_port: [8080] } } })));
    const env = { THV_HELPER_BASE_IMAGE: base, XDG_CONFIG_HOME: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'state'), XDG_DATA_HOME: join(dir, 'data') };
    const set = await runThv(['config', 'set-registry', registry], { env });
    assert.equal(set.code, 0, set.stderr);
    thv = await startThv(
      ['run', '--runtime', 'docker', '--foreground', '--name', name, '-v', `${FIXTURES}:/fixtures:ro`, 'probe', '--', 'node', '/fixtures/probe-server.mjs'],
      { timeoutMs: 180_000, env },
    );
  });
  after(async () => {
    if (thv) await thv.stop();
    for (const c of [allowed, other]) await docker.getContainer(c).remove({ force: true }).catch(() => {});
    await removeWorkloadResources(docker, name);
    // Made for the targets; thv removes it with its last container, the targets are not thv's. In use → kept.
    await removeNetwork(docker, EXTERNAL_NETWORK);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the registry entry's profile is the default; isolation is on by default", async () => {
    const [server] = await docker.listContainers({ filters: { label: [`toolhive-basename=${name}`, 'toolhive-network-isolation=true'] } });
    assert.ok(server, 'the server container runs, isolated');
    assert.equal(server.Image, await nodeBaseImage());
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
    // By name (the internal network's DNS does not know it) and by address (no route to it).
    const r = await callTool(thv!.url, 'fetch', { url: `http://${allowed}:8080/`, direct: true });
    assert.doesNotMatch(r, /target-ok/);
    const ip = (await docker.getContainer(allowed).inspect()).NetworkSettings.Networks['toolhive-external']?.IPAddress;
    assert.ok(ip, 'the allowed target has an address on toolhive-external');
    const byIp = await callTool(thv!.url, 'fetch', { url: `http://${ip}:8080/`, direct: true });
    assert.doesNotMatch(byIp, /target-ok/);
    assert.match(byIp, /ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|timeout/);
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
      const r = await workloadResources(docker, name);
      return r.containers.length === 0 && r.networks.length === 0 ? r : undefined;
    });
    assert.deepEqual(left, { containers: [], networks: [] });
  });
});

/**
 * The Docker gateway (the host, seen from the containers) is refused by the egress proxy even when the
 * profile allows everything (`network`), unless `--allow-docker-gateway`. The destination is an HTTP
 * server of this test bound to the default bridge's gateway address (a local interface).
 */
describe('the Docker gateway with network isolation', () => {
  const GATEWAY = '172.17.0.1';
  const names = [testWorkloadName('gwdeny'), testWorkloadName('gwallow')];
  let docker: Docker;
  let base: string;
  let server: Server;
  let port: number;
  before(async () => {
    docker = await ensureEngine();
    base = await nodeBaseImage();
    server = createServer((_q, s) => s.end('host-ok'));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, GATEWAY, resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server?.close();
    for (const n of names) await removeWorkloadResources(docker, n);
  });

  async function fetchGateway(name: string, profile: string, extra: string[]): Promise<string> {
    const thv = await startThv(
      ['run', '--runtime', 'docker', '--foreground', '--transport', 'stdio', '--name', name, '--permission-profile', profile, ...extra, '-v', `${FIXTURES}:/fixtures:ro`, base, '--', 'node', '/fixtures/probe-server.mjs'],
      { timeoutMs: 180_000, env: { THV_HELPER_BASE_IMAGE: base } },
    );
    try {
      return await callTool(thv.url, 'fetch', { url: `http://${GATEWAY}:${port}/` });
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  }

  it('is refused by default, even with a profile (JSON file) that allows everything', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'thv-gw-'));
    try {
      const profile = join(dir, 'profile.json');
      await writeFile(profile, JSON.stringify({ name: 'all', network: { outbound: { insecure_allow_all: true } } }));
      assert.match(await fetchGateway(names[0]!, profile, []), /^403 thv egress proxy: the Docker gateway is not allowed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is reachable with --allow-docker-gateway (built-in profile network)', async () => {
    assert.equal(await fetchGateway(names[1]!, 'network', ['--allow-docker-gateway']), '200 host-ok');
  });
});
