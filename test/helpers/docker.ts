/**
 * Docker Engine for the container runtime tests. No container registry is reachable on the test
 * machines, so the images are built here from what the host has:
 *  - `thv-test/node-base:<key>`: imported (`docker import`) from a root filesystem made of the host's
 *    `node` binary, the libraries `ldd` lists, npm, CA certificates and a static busybox (a shell and
 *    the usual tools, for builds and for the isolation tests);
 *  - `thv-test/conformance:<key>`: FROM that base, with the MCP conformance fixture bundled by esbuild
 *    into one file (`/app/server.mjs`), entrypoint `node /app/server.mjs`.
 * Images are cached by tag (the key hashes their inputs), so a test run builds them at most once.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { findContainerEngine } from '../../src/runtime/select.js';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CONFORMANCE_FIXTURE = join(REPO_ROOT, 'test/fixtures/conformance-server.ts');
const BUSYBOX = '/bin/busybox';

let enginePromise: Promise<Docker> | undefined;

/** The engine's client; runs scripts/services.sh once when no engine answers (it installs and starts one). */
export function ensureEngine(): Promise<Docker> {
  enginePromise ??= (async () => {
    let socket = await findContainerEngine();
    if (!socket) {
      await run('bash', [join(REPO_ROOT, 'scripts/services.sh')], { cwd: REPO_ROOT, timeout: 600_000 }).catch((err: Error & { stderr?: string }) => {
        throw new Error(`could not start a Docker engine with scripts/services.sh: ${err.message}\n${err.stderr ?? ''}`);
      });
      socket = await findContainerEngine();
    }
    if (!socket) throw new Error('no Docker engine answers, even after scripts/services.sh; the container tests need one');
    const docker = new Docker({ socketPath: socket });
    // What killed earlier runs left behind would hold ports and names, and would leak forever.
    const removed = await sweepStaleTestResources(docker);
    if (removed.length > 0) process.stderr.write(`# removed leftovers of earlier test runs: ${removed.join(', ')}\n`);
    return docker;
  })();
  return enginePromise;
}

async function imageExists(docker: Docker, tag: string): Promise<boolean> {
  try {
    await docker.getImage(tag).inspect();
    return true;
  } catch {
    return false;
  }
}

function hashOf(...parts: Array<string | Buffer>): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex').slice(0, 12);
}

/** Shared-library paths `ldd` lists for a binary. */
async function libsOf(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  const out: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s*\(/.exec(line);
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

async function copyInto(root: string, path: string): Promise<void> {
  const dest = join(root, path);
  await mkdir(dirname(dest), { recursive: true });
  await copyFile(realpathSync(path), dest);
  await chmod(dest, statSync(realpathSync(path)).mode & 0o7777);
}

let baseImagePromise: Promise<string> | undefined;

/** Tag of the node base image (imported when missing). */
export function nodeBaseImage(): Promise<string> {
  baseImagePromise ??= (async () => {
    const docker = await ensureEngine();
    if (!existsSync(BUSYBOX)) throw new Error(`${BUSYBOX} is missing: run scripts/services.sh (it installs busybox-static)`);
    const node = realpathSync(process.execPath);
    const npmDir = '/usr/lib/node_modules/npm';
    const key = hashOf(process.version, String(statSync(BUSYBOX).size), existsSync(npmDir) ? 'npm' : 'no-npm', 'v2');
    const tag = `thv-test/node-base:${key}`;
    if (await imageExists(docker, tag)) return tag;
    const root = await mkdtemp(join(tmpdir(), 'thv-rootfs-'));
    try {
      await copyInto(root, BUSYBOX);
      const { stdout } = await run(BUSYBOX, ['--list']);
      await mkdir(join(root, 'usr/bin'), { recursive: true });
      await mkdir(join(root, 'sbin'), { recursive: true });
      for (const applet of stdout.split('\n').filter((a) => a && a !== 'busybox')) {
        await symlink('busybox', join(root, 'bin', applet)).catch(() => {});
      }
      await symlink('/bin/env', join(root, 'usr/bin/env'));
      await mkdir(join(root, 'usr/local/bin'), { recursive: true });
      await copyFile(node, join(root, 'usr/local/bin/node'));
      await chmod(join(root, 'usr/local/bin/node'), 0o755);
      await symlink('/usr/local/bin/node', join(root, 'usr/bin/node'));
      for (const lib of await libsOf(node)) await copyInto(root, lib);
      if (existsSync(npmDir)) {
        await cp(npmDir, join(root, 'usr/local/lib/node_modules/npm'), { recursive: true });
        await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/local/bin/npm'));
        await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'usr/local/bin/npx'));
      }
      if (existsSync('/etc/ssl/certs/ca-certificates.crt')) await copyInto(root, '/etc/ssl/certs/ca-certificates.crt');
      await mkdir(join(root, 'etc'), { recursive: true });
      await writeFile(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n');
      await writeFile(join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
      await writeFile(join(root, 'etc/nsswitch.conf'), 'hosts: files dns\n');
      for (const d of ['tmp', 'root', 'app', 'proc', 'sys', 'dev']) await mkdir(join(root, d), { recursive: true });
      await chmod(join(root, 'tmp'), 0o1777);
      await importRootfs(root, tag);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    return tag;
  })();
  return baseImagePromise;
}

/** `tar -c root | docker import` with the image config a node image needs. */
function importRootfs(root: string, tag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-C', root, '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const imp = spawn(
      'docker',
      ['import', '-c', 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/sbin', '-c', 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt', '-c', 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt', '-c', 'WORKDIR /app', '-c', 'CMD ["node"]', '-', tag],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    tar.stdout.pipe(imp.stdin);
    let err = '';
    tar.stderr.on('data', (d: Buffer) => (err += d.toString()));
    imp.stderr.on('data', (d: Buffer) => (err += d.toString()));
    imp.on('error', reject);
    imp.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`docker import failed (${code}): ${err}`))));
  });
}

let fixtureImagePromise: Promise<string> | undefined;

/** Tag of the image running the conformance fixture (`--stdio` or `--http` as its argument). */
export function conformanceImage(): Promise<string> {
  fixtureImagePromise ??= (async () => {
    const base = await nodeBaseImage();
    const docker = await ensureEngine();
    const dir = await mkdtemp(join(tmpdir(), 'thv-fixture-image-'));
    try {
      await run(join(REPO_ROOT, 'node_modules/.bin/esbuild'), [
        CONFORMANCE_FIXTURE,
        '--bundle',
        '--platform=node',
        '--format=esm',
        '--target=node20',
        `--outfile=${join(dir, 'server.mjs')}`,
        // Bundled CommonJS dependencies call require(); give them one.
        "--banner:js=import { createRequire as __thvCreateRequire } from 'node:module'; const require = __thvCreateRequire(import.meta.url);",
        '--log-level=error',
      ], { cwd: REPO_ROOT });
      const bundle = await readFile(join(dir, 'server.mjs'));
      const tag = `thv-test/conformance:${hashOf(base, bundle)}`;
      if (await imageExists(docker, tag)) return tag;
      await writeFile(join(dir, 'Dockerfile'), `FROM ${base}\nCOPY server.mjs /app/server.mjs\nUSER 65534:65534\nENTRYPOINT ["node", "/app/server.mjs"]\n`);
      await buildContext(docker, dir, ['Dockerfile', 'server.mjs'], tag);
      return tag;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return fixtureImagePromise;
}

/** Builds a local context through the engine's build API; rejects with the build's error. */
export async function buildContext(docker: Docker, dir: string, files: string[], tag: string): Promise<void> {
  const stream = await docker.buildImage({ context: dir, src: files }, { t: tag, rm: true, forcerm: true });
  const output: Array<{ error?: string; stream?: string }> = await new Promise((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null, res: Array<{ error?: string }>) => (err ? reject(err) : resolve(res)));
  });
  const failed = output.find((o) => o.error);
  if (failed) throw new Error(`building ${tag} failed: ${failed.error}\n${output.map((o) => o.stream ?? '').join('')}`);
}

/**
 * Names of test workloads: `thvt-<kind>-<pid>` (kind without dashes), so a later run can tell which test
 * process made a container or network and sweep what a killed run left (`sweepStaleTestResources`).
 */
export function testWorkloadName(kind: string): string {
  return `thvt-${kind}-${process.pid}`;
}

/**
 * The test process that made a resource, from its name: `thvt-…`, and the distinctive names earlier versions
 * of the tests used (not their short ones like `lc-<pid>`, which a user's workload could carry).
 */
const TEST_RESOURCE_RE = /^(?:toolhive-)?(?:thvt-[a-z0-9]+|conf-stdio|conf-http|thv-test-allowed|thv-test-other)-(\d+)(?:[-:]|$)/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Everything of workload `name` in the engine, found both ways (a leak check must not trust the code it
 * checks): containers labelled `toolhive-basename=<name>` or named `<name>` / `<name>-…` (server
 * containers `<name>-<hex>`, sidecars `<name>-egress|ingress|dns`), networks named after it.
 */
export async function workloadResources(docker: Docker, name: string): Promise<{ containers: string[]; networks: string[] }> {
  const mine = (n: string): boolean => n === name || n.startsWith(`${name}-`) || n === `toolhive-${name}-internal`;
  const containers = await docker.listContainers({ all: true });
  const networks = await docker.listNetworks();
  return {
    containers: containers
      .filter((c) => c.Labels?.['toolhive-basename'] === name || c.Names.some((n) => mine(n.replace(/^\//, ''))))
      .map((c) => c.Names[0]!.replace(/^\//, ''))
      .sort(),
    networks: networks.map((n) => n.Name).filter(mine).sort(),
  };
}

/** Force-removes every container and network of workload `name` (for `after` hooks: runs even when a test failed). */
export async function removeWorkloadResources(docker: Docker, name: string): Promise<void> {
  const { containers, networks } = await workloadResources(docker, name);
  for (const c of containers) await docker.getContainer(c).remove({ force: true }).catch(() => {});
  for (const n of networks) await docker.getNetwork(n).remove().catch(() => {});
}

/** Containers, networks and tagged images of test runs whose process is gone (killed before its `after` hooks ran). */
export async function sweepStaleTestResources(docker: Docker): Promise<string[]> {
  const stale = (n: string): boolean => {
    const pid = Number(TEST_RESOURCE_RE.exec(n)?.[1] ?? 0);
    return pid > 1 && pid !== process.pid && !alive(pid);
  };
  const removed: string[] = [];
  for (const c of await docker.listContainers({ all: true })) {
    const n = c.Names[0]?.replace(/^\//, '') ?? '';
    if (!stale(n)) continue;
    await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
    removed.push(n);
  }
  for (const net of await docker.listNetworks()) {
    if (!stale(net.Name)) continue;
    await docker.getNetwork(net.Id).remove().catch(() => {});
    removed.push(net.Name);
  }
  // Images the tests tag (`thvt-latest-<pid>:latest`, `127.0.0.1:<port>/thvt-pull-<pid>:1`, …).
  for (const image of await docker.listImages()) {
    for (const tag of image.RepoTags ?? []) {
      if (!stale(tag.replace(/^[^/]+:\d+\//, ''))) continue;
      await docker.getImage(tag).remove().catch(() => {});
      removed.push(tag);
    }
  }
  return removed;
}
