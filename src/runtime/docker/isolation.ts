/**
 * `--isolate-network`: the server container sits on `toolhive-<name>-internal` (an internal bridge, no
 * route out) and reaches the outside only through the `<name>-egress` sidecar, which is on that network
 * and on `toolhive-external` and enforces the permission profile's outbound allow list. HTTP servers are
 * reached through `<name>-ingress`, which publishes the server port on 127.0.0.1 and forwards to the
 * server container. The sidecars run thv's own helper (helper-proxy-source.ts), built locally into an
 * image on a Node base image: `THV_HELPER_BASE_IMAGE`, default `node:24-alpine` (local, else pulled).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { Logger } from '../../logging.js';
import type { RunConfig } from '../../config/run-config.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import { engineMessage, statusOf } from './engine-errors.js';
import { HELPER_PROXY_SOURCE } from './helper-proxy-source.js';
import { ensureImage } from './images.js';

export const EXTERNAL_NETWORK = 'toolhive-external';
export const EGRESS_PORT = 3128;
const INGRESS_PORT = 8080;
const DEFAULT_HELPER_BASE = 'node:24-alpine';

export function internalNetworkName(name: string): string {
  return `toolhive-${name}-internal`;
}

export interface EgressPolicy {
  allowAll: boolean;
  hosts: string[];
  ports: number[];
  denyHosts: string[];
  denyIps: string[];
}

/** The profile's outbound rules as the helper reads them (no network section → everything allowed). */
export function egressPolicy(profile: Record<string, unknown> | undefined, allowGateway: boolean, gatewayIps: string[]): EgressPolicy {
  const network = profile?.['network'] as Record<string, unknown> | undefined;
  const outbound = (network?.['outbound'] ?? undefined) as Record<string, unknown> | undefined;
  const hosts = Array.isArray(outbound?.['allow_host']) ? (outbound!['allow_host'] as unknown[]).filter((h): h is string => typeof h === 'string') : [];
  const ports = Array.isArray(outbound?.['allow_port']) ? (outbound!['allow_port'] as unknown[]).map(Number).filter((p) => Number.isInteger(p)) : [];
  return {
    allowAll: network === undefined || outbound?.['insecure_allow_all'] === true,
    hosts,
    ports,
    denyHosts: allowGateway ? [] : ['host.docker.internal', 'gateway.docker.internal'],
    denyIps: allowGateway ? [] : gatewayIps,
  };
}

async function removeContainer(docker: Docker, name: string): Promise<void> {
  try {
    await docker.getContainer(name).remove({ force: true });
  } catch (err) {
    if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
  }
}

/** The networks called exactly `name` (the engine's name filter matches substrings), oldest first. */
async function networksNamed(docker: Docker, name: string): Promise<Docker.NetworkInspectInfo[]> {
  const all = await docker.listNetworks({ filters: { name: [name] } });
  return all
    .filter((n) => n.Name === name)
    .sort((a, b) => (a.Created < b.Created ? -1 : a.Created > b.Created ? 1 : a.Id < b.Id ? -1 : 1));
}

/**
 * Makes sure one network called `name` exists and returns its id. The engine's duplicate-name check is
 * not atomic: two thv processes creating `toolhive-external` at the same moment can both succeed, and
 * the engine then refuses every use of the name as ambiguous (by id too). Callers settle on one twin,
 * the same for all: one that containers are attached to (at most one can be, since no attach succeeds
 * while twins exist), else the oldest; the others are removed, so later uses succeed again.
 */
export async function ensureNetwork(docker: Docker, name: string, internal: boolean): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const found = await networksNamed(docker, name);
    if (found.length === 1) return found[0]!.Id;
    if (found.length > 1) return settleTwins(docker, found);
    try {
      await docker.createNetwork({ Name: name, Driver: 'bridge', Internal: internal, CheckDuplicate: true, Labels: { toolhive: 'true', 'toolhive-name': name } });
    } catch (err) {
      // 409: created meanwhile by another workload; listed on the next turn.
      if (statusOf(err) !== 409 || attempt >= 3) throw err;
    }
  }
}

async function settleTwins(docker: Docker, twins: Docker.NetworkInspectInfo[]): Promise<string> {
  const inUse = await Promise.all(
    twins.map(async (n) => {
      try {
        return Object.keys((await docker.getNetwork(n.Id).inspect()).Containers ?? {}).length > 0;
      } catch {
        return false; // removed meanwhile
      }
    }),
  );
  const keep = twins[inUse.indexOf(true)] ?? twins[0]!;
  for (const n of twins) if (n !== keep) await removeNetworkById(docker, n.Id);
  return keep.Id;
}

/**
 * Runs `fn(networkId)`, which puts a sidecar on the shared external network, after making sure the
 * network exists. Another thv removing the network as its last workload goes away can do so between
 * that check and the sidecar's start (seen with workloads starting and stopping at once), and a racing
 * creation can leave twins (see ensureNetwork): the network is then made or settled again and `fn`
 * tried again, at most four times.
 */
export async function onSharedNetwork<T>(docker: Docker, fn: (networkId: string) => Promise<T>, network = EXTERNAL_NETWORK): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const id = await ensureNetwork(docker, network, false);
    try {
      return await fn(id);
    } catch (err) {
      // Removed meanwhile (not found), or twins made by a racing creation (ambiguous): settled on the next turn.
      const retry = /network \S+ (?:not found|is ambiguous)/i.test(String((err as Error)?.message ?? err)) || statusOf(err) === 404;
      if (!retry || attempt >= 4) throw err;
    }
  }
}

let helperImage: Promise<string> | undefined;

/** The sidecar image, built once per helper version from a local (or pullable) Node image. */
export function ensureHelperImage(docker: Docker, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  helperImage ??= (async () => {
    const base = env.THV_HELPER_BASE_IMAGE || DEFAULT_HELPER_BASE;
    const tag = `thv-network-helper:${createHash('sha256').update(base).update(HELPER_PROXY_SOURCE).digest('hex').slice(0, 12)}`;
    try {
      await docker.getImage(tag).inspect();
      return tag;
    } catch {
      // build below
    }
    try {
      await ensureImage(docker, base, logger);
    } catch (err) {
      throw new ThvError(ErrorCodes.RuntimeUnavailable, `network isolation needs a Node base image for its proxy sidecars, and ${base} is not available: ${(err as Error).message}`, {
        hint: 'set THV_HELPER_BASE_IMAGE to a local image that has node, or run with --isolate-network=false',
      });
    }
    const dir = await mkdtemp(join(tmpdir(), 'thv-helper-'));
    try {
      await writeFile(join(dir, 'helper.mjs'), HELPER_PROXY_SOURCE);
      await writeFile(join(dir, 'Dockerfile'), `FROM ${base}\nCOPY helper.mjs /thv-helper.mjs\nUSER 65534:65534\nENTRYPOINT ["node", "/thv-helper.mjs"]\n`);
      const stream = await docker.buildImage({ context: dir, src: ['Dockerfile', 'helper.mjs'] }, { t: tag, rm: true, forcerm: true });
      const out: Array<{ error?: string }> = await new Promise((resolve, reject) =>
        docker.modem.followProgress(stream, (err: Error | null, res: Array<{ error?: string }>) => (err ? reject(err) : resolve(res))),
      );
      const failed = out.find((o) => o.error);
      if (failed) throw new Error(failed.error);
    } catch (err) {
      throw new ThvError(ErrorCodes.RuntimeUnavailable, `could not build the network isolation helper image: ${engineMessage(err)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return tag;
  })();
  helperImage.catch(() => (helperImage = undefined));
  return helperImage;
}

function sidecarLabels(name: string): Record<string, string> {
  return {
    toolhive: 'true',
    'toolhive-name': name,
    'toolhive-basename': name,
    'toolhive-transport': 'stdio',
    'toolhive-port': '80',
    'toolhive-auxiliary-workload': 'true',
  };
}

const LEAST_PRIVILEGE = { CapDrop: ['ALL'], CapAdd: [], SecurityOpt: ['no-new-privileges:true', 'label:disable'], Privileged: false };

async function waitForLog(container: Docker.Container, text: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  while (Date.now() < deadline) {
    const buf = (await container.logs({ stdout: true, stderr: true })) as unknown as Buffer;
    if (buf.toString('utf8').includes(text)) return;
    const state = (await container.inspect()).State;
    if (!state.Running) throw new Error(`the sidecar exited: ${buf.toString('utf8').slice(-500)}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 300);
  }
  throw new Error(`the sidecar did not start within ${timeoutMs / 1000} s`);
}

/** Networks and sidecars of one isolated workload. */
export class Isolation {
  readonly internalNetwork: string;
  readonly egressName: string;
  readonly ingressName: string;
  /** Set by `setup`; containers attach by id, names can be ambiguous (see ensureNetwork). */
  internalNetworkId: string | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly config: RunConfig,
    private readonly logger: Logger,
  ) {
    const name = config.container_name ?? config.name;
    this.internalNetwork = internalNetworkName(name);
    this.egressName = `${name}-egress`;
    this.ingressName = `${name}-ingress`;
  }

  /** Networks and the egress proxy; returns the environment that points the server at the proxy. */
  async setup(): Promise<Record<string, string>> {
    const image = await ensureHelperImage(this.docker, this.logger);
    this.internalNetworkId = await ensureNetwork(this.docker, this.internalNetwork, true);
    const gateways = new Set<string>(['172.17.0.1']);
    try {
      for (const c of (await this.docker.getNetwork('bridge').inspect()).IPAM?.Config ?? []) if (c.Gateway) gateways.add(c.Gateway);
    } catch {
      // no default bridge on this engine
    }
    const { egress, policy } = await onSharedNetwork(this.docker, async (externalNetworkId) => {
      // The gateway of the network the sidecar sits on; a 404 here (removed meanwhile) is retried.
      const external = new Set(gateways);
      for (const c of (await this.docker.getNetwork(externalNetworkId).inspect()).IPAM?.Config ?? []) if (c.Gateway) external.add(c.Gateway);
      const policy = egressPolicy(this.config.permission_profile, this.config.allow_docker_gateway ?? false, [...external]);
      await removeContainer(this.docker, this.egressName); // left over from a proxy that was killed (or a failed try)
      const c = await this.docker.createContainer({
        name: this.egressName,
        Image: image,
        Env: [`THV_EGRESS_POLICY=${JSON.stringify(policy)}`],
        Labels: sidecarLabels(this.egressName),
        HostConfig: { NetworkMode: externalNetworkId, ...LEAST_PRIVILEGE },
      });
      await this.docker.getNetwork(this.internalNetworkId ?? this.internalNetwork).connect({ Container: c.id });
      await c.start();
      return { egress: c, policy };
    });
    await waitForLog(egress, 'egress proxy listening', 20_000);
    this.logger.info({ allowAll: policy.allowAll, hosts: policy.hosts, ports: policy.ports }, 'network isolation: egress proxy running');
    const proxy = `http://${this.egressName}:${EGRESS_PORT}`;
    return {
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      NO_PROXY: 'localhost,127.0.0.1,::1',
      no_proxy: 'localhost,127.0.0.1,::1',
    };
  }

  /** HTTP servers: `127.0.0.1:<port>` on the host → the server container's `<port>` on the internal network. */
  async startIngress(target: string, port: number): Promise<void> {
    const image = await ensureHelperImage(this.docker, this.logger);
    const ingress = await onSharedNetwork(this.docker, async (externalNetworkId) => {
      await removeContainer(this.docker, this.ingressName);
      const c = await this.docker.createContainer({
        name: this.ingressName,
        Image: image,
        Env: [`THV_INGRESS_TARGET=${target}:${port}`],
        Labels: sidecarLabels(this.ingressName),
        ExposedPorts: { [`${INGRESS_PORT}/tcp`]: {} },
        HostConfig: {
          NetworkMode: externalNetworkId,
          PortBindings: { [`${INGRESS_PORT}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: String(port) }] },
          ...LEAST_PRIVILEGE,
        },
      });
      await this.docker.getNetwork(this.internalNetworkId ?? this.internalNetwork).connect({ Container: c.id });
      await c.start();
      return c;
    });
    await waitForLog(ingress, 'ingress listening', 20_000);
  }

  /** Removes the sidecars and the internal network; the shared external one goes with the last workload. */
  async teardown(): Promise<void> {
    await Promise.all([removeContainer(this.docker, this.egressName), removeContainer(this.docker, this.ingressName)]);
    await removeNetwork(this.docker, this.internalNetwork);
    const rest = await this.docker.listContainers({ all: true, filters: { label: ['toolhive=true'] } });
    if (rest.length === 0) await removeNetwork(this.docker, EXTERNAL_NETWORK);
  }
}

async function removeNetworkById(docker: Docker, id: string): Promise<void> {
  try {
    await docker.getNetwork(id).remove();
  } catch (err) {
    // 404: gone already; 403/409: still in use by another workload's containers.
    if (statusOf(err) !== 404 && statusOf(err) !== 403 && statusOf(err) !== 409) throw err;
  }
}

/** Removes every network called `name` that nothing is attached to (there can be same-named twins). */
export async function removeNetwork(docker: Docker, name: string): Promise<void> {
  for (const n of await networksNamed(docker, name)) await removeNetworkById(docker, n.Id);
}
