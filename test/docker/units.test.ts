/**
 * The container runtime's pure parts, against the reference's rules (spec §4.1, §4.5, §4.7, §2.2): socket
 * discovery order and overrides, runtime selection against the real engine, API version negotiation, image
 * tags, generated Dockerfiles, build-option validation, `--publish` forms and the egress policy.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { candidateSockets, findContainerEngine, selectRuntime } from '../../src/runtime/select.js';
import { engineClient } from '../../src/runtime/docker/client.js';
import { buildProtocolImage, dockerfileFor, imageTag, SCHEME_DEFAULTS } from '../../src/runtime/docker/build.js';
import { parsePublish } from '../../src/runtime/docker/runtime.js';
import { egressPolicy } from '../../src/runtime/docker/isolation.js';
import { createLogger } from '../../src/logging.js';
import { ThvError } from '../../src/errors.js';
import { ensureEngine } from '../helpers/docker.js';

describe('socket discovery (spec §4.1)', () => {
  it('DOCKER_HOST alone when set (unix), nothing for other schemes', () => {
    assert.deepEqual(candidateSockets({ DOCKER_HOST: 'unix:///run/x.sock', TOOLHIVE_DOCKER_SOCKET: '/y' }), ['/run/x.sock']);
    assert.deepEqual(candidateSockets({ DOCKER_HOST: 'tcp://127.0.0.1:2375' }), []);
  });

  it('override variables in the order Podman, Docker, Colima', () => {
    assert.deepEqual(candidateSockets({ TOOLHIVE_COLIMA_SOCKET: '/c', TOOLHIVE_DOCKER_SOCKET: '/d', TOOLHIVE_PODMAN_SOCKET: '/p' }), ['/p', '/d', '/c']);
  });

  it('defaults: Podman, then Docker (and Desktop, Rancher, OrbStack), then Colima', () => {
    const list = candidateSockets({ XDG_RUNTIME_DIR: '/run/user/1000' });
    const home = homedir();
    assert.deepEqual(list, [
      '/var/run/podman/podman.sock',
      '/run/user/1000/podman/podman.sock',
      join(home, '.local/share/containers/podman/machine/podman.sock'),
      '/var/run/docker.sock',
      join(home, '.docker/run/docker.sock'),
      join(home, '.docker/desktop/docker.sock'),
      join(home, '.rd/docker.sock'),
      join(home, '.orbstack/run/docker.sock'),
      join(home, '.colima/default/docker.sock'),
    ]);
  });

  it('the first socket that answers wins; --runtime auto picks docker then; a missing engine is a clear error', async () => {
    await ensureEngine();
    const socket = await findContainerEngine();
    assert.ok(socket, 'the test engine answers');
    assert.equal(await findContainerEngine({ DOCKER_HOST: `unix://${socket}` }), socket);
    assert.equal(await selectRuntime('auto', { DOCKER_HOST: `unix://${socket}` }), 'docker');
    assert.equal(await findContainerEngine({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }), undefined);
    await assert.rejects(selectRuntime('docker', { DOCKER_HOST: 'unix:///nonexistent/docker.sock' }), /no container engine answers/);
    await assert.rejects(selectRuntime('auto', { DOCKER_HOST: 'unix:///nonexistent/docker.sock' }), (err: ThvError) => {
      assert.match(err.message, /no container engine found/);
      assert.match(String(err.hint), /--runtime process/);
      return true;
    });
    assert.equal(await selectRuntime('process', { DOCKER_HOST: 'unix:///nonexistent/docker.sock' }), 'process');
    // An override that names a missing socket is an error, not a silent fall-through to the defaults.
    await assert.rejects(selectRuntime('auto', { TOOLHIVE_DOCKER_SOCKET: '/nonexistent/docker.sock' }), /TOOLHIVE_DOCKER_SOCKET is set to \/nonexistent\/docker\.sock, which does not exist/);
    assert.equal(await findContainerEngine({ TOOLHIVE_DOCKER_SOCKET: socket }), socket);
  });

  it('negotiates the API version with the engine (capped at 1.41)', async () => {
    const docker = await ensureEngine();
    const server = ((await docker.version()) as { ApiVersion: string }).ApiVersion;
    const client = await engineClient();
    const [a1, a2] = server.split('.').map(Number);
    const expected = a1! > 1 || a2! >= 41 ? '1.41' : server;
    assert.equal(client.apiVersion, expected);
    assert.ok(await client.docker.ping());
  });
});

describe('protocol-scheme builds (spec §4.5)', () => {
  it('image tags: toolhivelocal/<scheme>-<name>:<YYYYMMDDhhmmss>, lower-cased, version stripped', () => {
    const at = new Date(Date.UTC(2026, 10, 22, 9, 8, 7));
    assert.equal(imageTag('npx', '@modelcontextprotocol/server-everything@2026.8.31', at), 'toolhivelocal/npx-modelcontextprotocol-server-everything:20261122090807');
    assert.equal(imageTag('uvx', 'mcp-server-Fetch@1.0', at), 'toolhivelocal/uvx-mcp-server-fetch:20261122090807');
    assert.equal(imageTag('go', 'github.com/example/srv@v1.2.3', at), 'toolhivelocal/go-github.com-example-srv:20261122090807');
  });

  it('default base images and packages are the reference ones', () => {
    assert.deepEqual(SCHEME_DEFAULTS, {
      uvx: { builderImage: 'python:3.14-slim', packages: ['ca-certificates', 'git'] },
      npx: { builderImage: 'node:24-alpine', packages: ['git', 'ca-certificates'] },
      go: { builderImage: 'golang:1.26-alpine', packages: ['ca-certificates', 'git'] },
    });
  });

  it('npx: two stages, npm install of the package, non-root runtime, entrypoint npx <name without version>', () => {
    const d = dockerfileFor({ scheme: 'npx', pkg: '@scope/pkg@1.2.3', builderImage: 'node:24-alpine', packages: ['git', 'ca-certificates', 'curl'], buildWith: [], hasCa: false });
    assert.match(d, /^# Generated by thv/);
    assert.equal((d.match(/^FROM node:24-alpine/gm) ?? []).length, 2);
    assert.match(d, /apk add --no-cache git ca-certificates curl/);
    assert.match(d, /npm install --save '@scope\/pkg@1\.2\.3'/);
    assert.match(d, /^USER appuser$/m);
    assert.match(d, /ENTRYPOINT \["npx", "@scope\/pkg"\]/);
    assert.doesNotMatch(d, /COPY ca-cert\.crt|NODE_EXTRA_CA_CERTS/);
  });

  it('uvx: uv tool install with == and --with; go: go install @latest on alpine:3.23', () => {
    const u = dockerfileFor({ scheme: 'uvx', pkg: 'mcp-server-fetch@2025.1.1', builderImage: 'python:3.14-slim', packages: ['ca-certificates', 'git'], buildWith: ['httpx>=0.27'], hasCa: false });
    assert.match(u, /uv tool install --with 'httpx>=0\.27' "mcp-server-fetch==2025\.1\.1"/);
    assert.match(u, /ENTRYPOINT \["mcp-server-fetch"\]/);
    const g = dockerfileFor({ scheme: 'go', pkg: 'github.com/example/srv', builderImage: 'golang:1.26-alpine', packages: ['ca-certificates', 'git'], buildWith: [], hasCa: false });
    assert.match(g, /go install 'github\.com\/example\/srv@latest'/);
    assert.match(g, /^FROM alpine:3\.23$/m);
    assert.match(g, /ENTRYPOINT \["\/app\/mcp-server"\]/);
  });

  it('--ca-cert: the CA is appended to the system bundle before any network access, and Node reads that bundle', () => {
    const d = dockerfileFor({ scheme: 'npx', pkg: 'pkg', builderImage: 'node:24-alpine', packages: ['git'], buildWith: [], hasCa: true });
    const copy = d.indexOf('COPY ca-cert.crt');
    assert.ok(copy > 0 && copy < d.indexOf('apk add') && copy < d.indexOf('npm install'), d);
    assert.match(d, /ENV NODE_EXTRA_CA_CERTS=\/etc\/ssl\/certs\/ca-certificates\.crt/);
  });

  it('rejects bad package names, --build-with outside uvx, unsafe references and an unreadable --ca-cert before touching the engine', async () => {
    const noEngine = {} as Docker;
    const o = (extra: Record<string, unknown> = {}, caCert?: string) => ({ runtimeConfig: extra, caCert, progress: process.stderr, logger: createLogger({ debug: false }) });
    await assert.rejects(buildProtocolImage(noEngine, "npx://pkg'; rm -rf /", o()), /invalid protocol scheme provided for MCP server: .* is not a valid npx package reference/);
    await assert.rejects(buildProtocolImage(noEngine, 'npx://pkg', o({ additional_packages: ['curl;id'] })), /invalid package name "curl;id"/);
    await assert.rejects(buildProtocolImage(noEngine, 'npx://pkg', o({ build_with: ['x'] })), /--build-with only applies to uvx/);
    await assert.rejects(buildProtocolImage(noEngine, 'npx://pkg', o({ builder_image: 'bad image' })), /invalid runtime image "bad image"/);
    await assert.rejects(buildProtocolImage(noEngine, 'npx://pkg', o({}, '/nonexistent/ca.pem')), /cannot read --ca-cert \/nonexistent\/ca\.pem/);
    await assert.rejects(buildProtocolImage(noEngine, 'go://./cmd/server', o()), /local go:\/\/ paths are not built into containers/);
  });
});

describe('--publish and the egress policy', () => {
  it('publish forms: [[ip:]host:]container[/proto], 127.0.0.1 unless an IP is given', () => {
    assert.deepEqual(parsePublish('8080'), { hostIp: '127.0.0.1', hostPort: '', containerPort: '8080/tcp' });
    assert.deepEqual(parsePublish('9000:8080'), { hostIp: '127.0.0.1', hostPort: '9000', containerPort: '8080/tcp' });
    assert.deepEqual(parsePublish('0.0.0.0:9000:8080/udp'), { hostIp: '0.0.0.0', hostPort: '9000', containerPort: '8080/udp' });
    assert.deepEqual(parsePublish('[::1]::8080'), { hostIp: '::1', hostPort: '', containerPort: '8080/tcp' });
    assert.throws(() => parsePublish('x:y'), /invalid --publish value "x:y"/);
  });

  it('no network section or insecure_allow_all allows all; lists are kept; the gateway is denied unless allowed', () => {
    assert.equal(egressPolicy(undefined, false, []).allowAll, true);
    assert.equal(egressPolicy({ network: { outbound: { insecure_allow_all: true } } }, false, []).allowAll, true);
    const none = egressPolicy({ network: { outbound: {} } }, false, ['172.17.0.1']);
    assert.deepEqual(none, { allowAll: false, hosts: [], ports: [], denyHosts: ['host.docker.internal', 'gateway.docker.internal'], denyIps: ['172.17.0.1'] });
    const lists = egressPolicy({ network: { outbound: { allow_host: ['api.example.com', '.example.org'], allow_port: [443, '8443'] } } }, true, ['172.17.0.1']);
    assert.deepEqual(lists, { allowAll: false, hosts: ['api.example.com', '.example.org'], ports: [443, 8443], denyHosts: [], denyIps: [] });
  });
});

describe('the shared external network, removed by another thv at the wrong moment', () => {
  it('is made again and the sidecar start retried', async () => {
    const { onSharedNetwork, removeNetwork } = await import('../../src/runtime/docker/isolation.js');
    const { nodeBaseImage } = await import('../helpers/docker.js');
    const docker = await ensureEngine();
    const image = await nodeBaseImage();
    const network = `thv-test-shared-${process.pid}`;
    const name = `${network}-sidecar`;
    let attempts = 0;
    try {
      const c = await onSharedNetwork(
        docker,
        async () => {
          attempts++;
          await docker.getContainer(name).remove({ force: true }).catch(() => undefined);
          // First attempt: the last workload of another thv goes away between the check and the start.
          if (attempts === 1) await removeNetwork(docker, network);
          const created = await docker.createContainer({ name, Image: image, Cmd: ['sleep', '30'], HostConfig: { NetworkMode: network } });
          await created.start();
          return created;
        },
        network,
      );
      assert.equal(attempts, 2);
      assert.equal((await c.inspect()).State.Running, true);
    } finally {
      await docker.getContainer(name).remove({ force: true }).catch(() => undefined);
      await removeNetwork(docker, network);
    }
  });
});

describe('same-named networks (the engine does not make network creation atomic)', () => {
  it('callers settle on the oldest twin, unattached twins are removed, removal takes them all, racing starts all succeed', async () => {
    const { ensureNetwork, onSharedNetwork, removeNetwork } = await import('../../src/runtime/docker/isolation.js');
    const { nodeBaseImage } = await import('../helpers/docker.js');
    const docker = await ensureEngine();
    const image = await nodeBaseImage();
    const name = `thvt-twins-${process.pid}`;
    // API 1.41 still honours CheckDuplicate=false: the twins two racing creations can leave behind.
    const create = async (): Promise<string> => (await docker.createNetwork({ Name: name, CheckDuplicate: false })).id;
    try {
      const oldest = await create();
      const twin = await create();
      assert.notEqual(oldest, twin);
      await assert.rejects(docker.getNetwork(name).inspect(), /ambiguous|2 matches/i, 'the engine cannot resolve the name');
      const ids = await Promise.all([1, 2, 3, 4].map(() => ensureNetwork(docker, name, false)));
      assert.deepEqual(new Set(ids), new Set([oldest]));
      const left = (await docker.listNetworks({ filters: { name: [name] } })).filter((n) => n.Name === name).map((n) => n.Id);
      assert.deepEqual(left, [oldest]);

      await create();
      await removeNetwork(docker, name);
      assert.equal((await docker.listNetworks({ filters: { name: [name] } })).filter((n) => n.Name === name).length, 0);

      // Racing first creations can leave twins, and a caller may get a twin another removes: its
      // container start then fails with 404 and is retried, so every racing start succeeds.
      const racers = [1, 2, 3, 4].map((i) => `${name}-c${i}`);
      try {
        const started = await Promise.all(
          racers.map((cname) =>
            onSharedNetwork(
              docker,
              async (id) => {
                await docker.getContainer(cname).remove({ force: true }).catch(() => undefined);
                const c = await docker.createContainer({ name: cname, Image: image, Cmd: ['sleep', '30'], HostConfig: { NetworkMode: id } });
                await c.start();
                return c;
              },
              name,
            ),
          ),
        );
        for (const c of started) assert.equal((await c.inspect()).State.Running, true);
      } finally {
        for (const cname of racers) await docker.getContainer(cname).remove({ force: true }).catch(() => undefined);
      }
    } finally {
      await removeNetwork(docker, name);
    }
  });
});
