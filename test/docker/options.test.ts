/**
 * `thv run` options of the container runtime, on a real engine:
 *  - `--image-verification enabled` refuses an image it cannot verify (sigstore needs the network), says
 *    why, exits 3, and creates nothing (foreground and detached);
 *  - pull policy: an image not in the engine is pulled (from a registry on 127.0.0.1) with progress on
 *    stderr; a missing image that cannot be pulled fails naming it and why; `:latest` is pulled first
 *    and, when no registry answers, the local copy runs;
 *  - an HTTP server container gets MCP_TRANSPORT/MCP_PORT/FASTMCP_PORT/MCP_HOST; `-p/--publish` adds
 *    bindings next to the server port, on 127.0.0.1 unless an IP is given, and the server answers there;
 *  - `--network none` gives the container no network, drops isolation (no helper containers, no networks).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { freePort } from '../../src/proxy/net.js';
import { buildContext, conformanceImage, ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName, workloadResources } from '../helpers/docker.js';
import { JSON_AND_SSE, initializeBody, openSession, post, startThv } from '../helpers/thv.js';
import { listJson, sandbox, type Sandbox } from '../workloads/helpers.js';
import { serveImage, type LocalRegistry } from '../helpers/registry.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('container run options', () => {
  const names = { verify: testWorkloadName('verify'), publish: testWorkloadName('publish'), nonet: testWorkloadName('nonet'), latest: testWorkloadName('latest'), pull: testWorkloadName('pull') };
  let docker: Docker;
  let image: string;
  let sb: Sandbox;
  before(async () => {
    docker = await ensureEngine();
    image = await conformanceImage();
    sb = await sandbox({ THV_RUNTIME: 'docker' });
  });
  after(async () => {
    try {
      await sb?.cleanup();
    } finally {
      for (const n of Object.values(names)) await removeWorkloadResources(docker, n);
    }
  });

  it('--image-verification enabled refuses the image, says why, exits 3 and creates nothing', async () => {
    for (const mode of [['--foreground'], []]) {
      const r = await sb.thv(['run', ...mode, '--image-verification', 'enabled', '--transport', 'streamable-http', '--name', names.verify, image, '--', '--http'], 60_000);
      assert.equal(r.code, 3, `exit code (${mode.join(' ') || 'detached'}): ${r.stderr}`);
      assert.match(r.stderr, /refusing to run thv-test\/conformance:[0-9a-f]+: image signature verification \(--image-verification enabled\) is not available/);
      assert.match(r.stderr, /sigstore verification needs the Sigstore trusted root, fetched over the network/);
      assert.match(r.stderr, /--image-verification warn \(the default\) or disabled/);
    }
    assert.deepEqual(await workloadResources(docker, names.verify), { containers: [], networks: [] });
    assert.equal((await listJson(sb)).find((w) => w.name === names.verify), undefined, 'no workload is saved');
  });

  it('an image neither present nor pullable fails at once, naming it and the engine\'s reason', async () => {
    const missing = `thv-test/${names.verify}-missing:1`;
    const r = await sb.thv(['run', '--foreground', '--transport', 'stdio', '--name', names.verify, missing], 60_000);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`image not found locally and pulling it failed: ${missing}: `), r.stderr);
    assert.deepEqual(await workloadResources(docker, names.verify), { containers: [], networks: [] });
  });

  it('an image not in the engine is pulled from its registry, with progress on stderr', async () => {
    // A fresh image (a random layer, so nothing of it is in the engine), served by a registry on 127.0.0.1.
    const dir = await mkdtemp(join(tmpdir(), 'thv-pull-'));
    const src = `${names.pull}-src:1`;
    const ref = () => `${registry!.host}/${names.pull}:1`;
    let registry: LocalRegistry | undefined;
    try {
      await copyFile('/bin/busybox', join(dir, 'busybox'));
      await writeFile(join(dir, 'marker'), randomBytes(16).toString('hex'));
      await writeFile(join(dir, 'Dockerfile'), 'FROM scratch\nCOPY busybox /bin/busybox\nCOPY marker /marker\nENTRYPOINT ["/bin/busybox", "cat"]\n');
      await buildContext(docker, dir, ['Dockerfile', 'busybox', 'marker'], src);
      registry = await serveImage(src, names.pull, '1');
      await docker.getImage(src).remove();
      const thv = await startThv(
        ['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--name', names.pull, ref()],
        { timeoutMs: 120_000 },
      );
      try {
        const stderr = thv.stderr();
        assert.match(stderr, new RegExp(`Pulling from ${names.pull}`));
        assert.match(stderr, /: Pull complete/, 'one line per layer and status');
        assert.ok(stderr.includes(`Successfully pulled ${ref()}`), stderr);
        assert.ok(registry.requests.some((r) => r.startsWith(`GET /v2/${names.pull}/blobs/sha256:`)), registry.requests.join('\n'));
        await docker.getImage(ref()).inspect();
      } finally {
        const code = await thv.stop();
        assert.equal(code, 0, `thv ended with ${code ?? thv.child.signalCode}; stderr:\n${thv.stderr()}`);
      }
    } finally {
      if (registry) {
        await docker.getImage(ref()).remove({ force: true }).catch(() => {});
        await registry.close();
      }
      await docker.getImage(src).remove({ force: true }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a :latest image is pulled first; when that fails, the local copy runs (with a warning)', async () => {
    const latest = `${names.latest}:latest`;
    await docker.getImage(image).tag({ repo: names.latest, tag: 'latest' });
    try {
      const thv = await startThv(
        ['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--name', names.latest, latest, '--', '--stdio'],
        { timeoutMs: 120_000 },
      );
      try {
        assert.match(thv.stderr(), /could not pull the image; using the local copy/);
        await openSession(thv.url);
      } finally {
        assert.equal(await thv.stop(), 0);
      }
    } finally {
      await docker.getImage(latest).remove().catch(() => {});
    }
  });

  it('an HTTP server container gets the MCP_* environment; -p/--publish adds 127.0.0.1 bindings the server answers on', async () => {
    const target = await freePort();
    const extra = await freePort();
    const thv = await startThv(
      [
        'run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'streamable-http', '--name', names.publish,
        '--target-port', String(target), '-p', `${extra}:${target}`, '-p', String(target), image, '--', '--http',
      ],
      { timeoutMs: 120_000 },
    );
    try {
      const [c] = await docker.listContainers({ filters: { label: ['toolhive=true', `toolhive-basename=${names.publish}`] } });
      assert.ok(c, 'the server container runs');
      const inspected = await docker.getContainer(c.Id).inspect();
      const env = inspected.Config.Env ?? [];
      for (const e of ['MCP_TRANSPORT=streamable-http', `MCP_PORT=${target}`, `FASTMCP_PORT=${target}`, 'MCP_HOST=0.0.0.0']) assert.ok(env.includes(e), `${e} in ${env.join(' ')}`);
      const bindings = inspected.NetworkSettings.Ports[`${target}/tcp`] ?? [];
      assert.ok(bindings.every((b) => b.HostIp === '127.0.0.1'), JSON.stringify(bindings));
      const hostPorts = bindings.map((b) => Number(b.HostPort));
      assert.equal(hostPorts.length, 3, JSON.stringify(bindings));
      assert.ok(hostPorts.includes(target) && hostPorts.includes(extra), JSON.stringify(bindings));
      // The server answers on each published port directly (not through thv's proxy). Its DNS-rebinding
      // check accepts only its own port in Host, so that is what we send.
      for (const port of hostPorts) {
        const { status, body } = await initializeDirect(port, `127.0.0.1:${target}`);
        assert.equal(status, 200, `port ${port}: ${body}`);
        assert.match(body, /"protocolVersion"/);
      }
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });

  it('--network none: no network inside, no isolation helpers, no networks', async () => {
    const thv = await startThv(
      [
        'run', '--runtime', 'docker', '--foreground', '--transport', 'stdio', '--stdio-sessions', 'shared', '--name', names.nonet, '--network', 'none',
        '-v', `${FIXTURES}:/fixtures:ro`, await nodeBaseImage(), '--', 'node', '/fixtures/probe-server.mjs',
      ],
      { timeoutMs: 120_000 },
    );
    try {
      const sid = await openSession(thv.url);
      const res = await post(thv.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list', arguments: { path: '/sys/class/net' } } }, { 'mcp-session-id': sid });
      const body = await res.text();
      assert.equal(res.status, 200, body);
      // Only the loopback interface exists.
      assert.match(body, /"text":"lo"/, body);
      const r = await workloadResources(docker, names.nonet);
      assert.equal(r.containers.length, 1, `only the server container: ${r.containers.join(', ')}`);
      assert.deepEqual(r.networks, []);
      const [c] = await docker.listContainers({ filters: { label: [`toolhive-basename=${names.nonet}`] } });
      assert.equal(c?.HostConfig.NetworkMode, 'none');
      assert.equal(c?.Labels['toolhive-network-isolation'], 'false');
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });
});

/** POST initialize to 127.0.0.1:<port>/mcp with the given Host header (fetch may not set Host). */
function initializeDirect(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host, 'content-type': 'application/json', accept: JSON_AND_SSE } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer on port ${port}`)));
    req.on('error', reject);
    req.end(JSON.stringify(initializeBody()));
  });
}
