import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import type Docker from 'dockerode';
import type { Logger } from '../../logging.js';
import type { RunConfig } from '../../config/run-config.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import type { LaunchRequest, Runtime, ServerHandle } from '../types.js';
import { ContainerServer } from './container-server.js';
import { ignoreOverlays, profileMounts, type Mount } from './mounts.js';
import { Isolation } from './isolation.js';
import { engineMessage } from './engine-errors.js';

/** Our own variables never reach the server (as for processes). */
const PRIVATE_ENV = /^(TOOLHIVE_|THV_)/;

/**
 * `[[ip:]hostPort:]containerPort[/proto]` (docker's -p forms, as the option check accepts them): no host
 * port → the engine picks one; no IP → 127.0.0.1 (never all interfaces by default).
 */
export function parsePublish(spec: string): { containerPort: string; hostIp: string; hostPort: string } {
  const m = /^(?:(?:(\[[^\]]+\]|[^:]+):)?(\d*):)?(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(spec.trim());
  if (!m) throw new ThvError(ErrorCodes.InvalidArgument, `invalid --publish value "${spec}": expected [[ip:]hostPort:]containerPort[/tcp|udp|sctp]`);
  return { hostIp: (m[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), hostPort: m[2] ?? '', containerPort: `${m[3]}/${(m[4] ?? 'tcp').toLowerCase()}` };
}

function networkMode(profile: Record<string, unknown> | undefined): string {
  const n = profile?.['network'];
  const mode = n && typeof n === 'object' ? (n as Record<string, unknown>)['mode'] : undefined;
  return typeof mode === 'string' && mode !== '' && mode !== 'default' ? mode : 'bridge';
}

export interface DockerRuntimeOptions {
  /** The engine client; a promise so the runtime can be made synchronously (the proxy settings do). */
  docker: Docker | Promise<Docker>;
  /** The image to run (already present in the engine: pulled or built before). */
  image: string;
  config: RunConfig;
  logger: Logger;
}

/**
 * Runs the workload's server as containers: one per launch (the stdio bridge launches one per session,
 * or one shared), each with ToolHive's labels, least privilege (all capabilities dropped, no new
 * privileges, never privileged), the profile's mounts plus `.thvignore` overlays, and for HTTP servers
 * the server port published on 127.0.0.1 under the same number.
 */
export class DockerRuntime implements Runtime {
  readonly kind = 'docker' as const;
  private readonly mounts: Mount[];
  private readonly isolated: boolean;
  private isolation: Promise<{ isolation: Isolation; env: Record<string, string> }> | undefined;

  constructor(private readonly o: DockerRuntimeOptions) {
    if (o.docker instanceof Promise) o.docker.catch(() => {}); // reported by the first launch
    const base = profileMounts(o.config.permission_profile, o.logger);
    const overlays = ignoreOverlays(base, { loadGlobal: o.config.ignore_config?.LoadGlobal ?? true, print: o.config.ignore_config?.PrintOverlays ?? false }, o.logger);
    this.mounts = [...base, ...overlays];
    this.isolated = (o.config.isolate_network ?? false) && networkMode(o.config.permission_profile) === 'bridge';
    if (this.isolated && (o.config.publish ?? []).length > 0) {
      o.logger.warn('--publish has no effect with network isolation: the server container is on an internal network');
    }
  }

  createOptions(request: LaunchRequest): Docker.ContainerCreateOptions {
    const { config } = this.o;
    const stdio = request.onLine !== undefined;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(config.env_vars ?? {})) if (!PRIVATE_ENV.test(k)) env[k] = v;
    Object.assign(env, request.env ?? {});
    env.MCP_TRANSPORT = config.transport;
    const exposed: Record<string, object> = {};
    const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
    if (!stdio && request.port) {
      // Inside the container the server must listen on all interfaces to be reachable through the port mapping.
      env.MCP_HOST = '0.0.0.0';
      const key = `${request.port}/tcp`;
      exposed[key] = {};
      bindings[key] = [{ HostIp: '127.0.0.1', HostPort: String(request.port) }];
    }
    for (const p of config.publish ?? []) {
      const { containerPort, hostIp, hostPort } = parsePublish(p);
      exposed[containerPort] = {};
      (bindings[containerPort] ??= []).push({ HostIp: hostIp, HostPort: hostPort });
    }
    const labels: Record<string, string> = {
      ...(config.container_labels ?? {}),
      toolhive: 'true',
      'toolhive-name': config.container_name ?? config.name,
      'toolhive-basename': config.base_name ?? config.name,
      'toolhive-transport': config.transport,
      'toolhive-port': String(config.port),
      'toolhive-network-isolation': String(this.isolated),
    };
    const mode = networkMode(config.permission_profile);
    return {
      // Unique per launch: per-session stdio servers run several containers of one workload.
      name: `${config.container_name ?? config.name}-${randomBytes(4).toString('hex')}`,
      Image: this.o.image,
      Cmd: config.cmd_args && config.cmd_args.length > 0 ? config.cmd_args : undefined,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      Labels: labels,
      AttachStdin: stdio,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: stdio,
      // Closing our attach stream closes the server's stdin: it sees EOF, as a child process would.
      StdinOnce: stdio,
      Tty: false,
      ExposedPorts: Object.keys(exposed).length > 0 ? exposed : undefined,
      HostConfig: {
        Binds: this.mounts.map((m) => `${m.source}:${m.target}${m.readOnly ? ':ro' : ''}`),
        NetworkMode: mode,
        PortBindings: Object.keys(bindings).length > 0 ? bindings : undefined,
        CapDrop: ['ALL'],
        CapAdd: [],
        SecurityOpt: ['no-new-privileges:true', 'label:disable'],
        Privileged: false,
        Init: true,
      },
    };
  }

  launch(request: LaunchRequest, logger: Logger): ServerHandle {
    const docker = Promise.resolve(this.o.docker);
    const create = (async () => {
      const options = this.createOptions(request);
      if (!this.isolated) return options;
      const { isolation, env } = await this.isolationReady(await docker);
      options.Env = [...(options.Env ?? []), ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
      options.HostConfig = { ...options.HostConfig, NetworkMode: isolation.internalNetworkId ?? isolation.internalNetwork, PortBindings: undefined };
      // HTTP servers: the ingress sidecar publishes the port and forwards to this container by name.
      if (request.onLine === undefined && request.port) await isolation.startIngress(options.name!, request.port);
      return options;
    })();
    create.catch(() => {}); // reported through the handle's `spawned`
    return new ContainerServer(docker, create, logger, request.onLine, request.onExit);
  }

  /** Networks and the egress sidecar, set up once for all the workload's containers. */
  private isolationReady(docker: Docker): Promise<{ isolation: Isolation; env: Record<string, string> }> {
    this.isolation ??= (async () => {
      const isolation = new Isolation(docker, this.o.config, this.o.logger);
      try {
        return { isolation, env: await isolation.setup() };
      } catch (err) {
        await isolation.teardown().catch(() => {});
        throw err instanceof ThvError ? err : new ThvError(ErrorCodes.ServerStartFailed, `could not set up network isolation: ${engineMessage(err)}`);
      }
    })();
    this.isolation.catch(() => (this.isolation = undefined));
    return this.isolation;
  }

  async cleanup(): Promise<void> {
    const pending = this.isolation;
    this.isolation = undefined;
    if (!pending) return;
    try {
      await (await pending).isolation.teardown();
    } catch (err) {
      this.o.logger.warn({ err: engineMessage(err) }, 'could not remove the network isolation sidecars');
    }
  }

  /**
   * A published port accepts connections as soon as the container runs (the engine's port proxy
   * listens); only an answer to an HTTP request shows the server itself listens.
   */
  async waitListening(host: string, port: number, timeoutMs: number, until: Promise<unknown>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let stopped: unknown;
    let isStopped = false;
    until.then(
      (v) => ((isStopped = true), (stopped = v)),
      (e) => ((isStopped = true), (stopped = e)),
    );
    let delay = 50;
    while (Date.now() < deadline) {
      if (isStopped) throw stopped instanceof Error ? stopped : new Error(String(stopped ?? 'stopped'));
      if (await answersHttp(host, port)) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 500);
    }
    throw new Error(`the server did not answer HTTP on ${host}:${port} within ${Math.round(timeoutMs / 1000)} s`);
  }
}

function answersHttp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 2000);
    sock.once('connect', () => sock.write(`GET / HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`));
    sock.once('data', () => done(true));
    sock.once('error', () => done(false));
    sock.once('close', () => done(false));
  });
}

/**
 * The runtime for a RunConfig whose image is in the engine already (`thv run` built or pulled it). Made
 * synchronously; the engine client (and dockerode) load on the first launch.
 */
export function dockerRuntimeFor(config: RunConfig, logger: Logger): DockerRuntime {
  const docker = import('./client.js').then((m) => m.engineClient()).then((c) => c.docker);
  return new DockerRuntime({ docker, image: config.image, config, logger });
}
