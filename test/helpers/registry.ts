/**
 * A minimal container registry on 127.0.0.1 (the pull side of the Registry HTTP API v2: `/v2/`,
 * manifests, blobs) serving images exported from the local engine with `docker save`. The engine treats
 * 127.0.0.0/8 registries as insecure (plain HTTP) by default, so `docker pull 127.0.0.1:<port>/<name>:<tag>`
 * works with no registry on the network — for the tests of thv's pull path and its progress display.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

const run = promisify(execFile);

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export interface LocalRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  /** Requests seen (method and path), to show the engine really pulled. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves `image` (present in the engine) as `<repo>:<tag>`. */
export async function serveImage(image: string, repo: string, tag: string): Promise<LocalRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'thv-registry-'));
  const blobs = new Map<string, Buffer>();
  let manifest: Buffer;
  try {
    await run('sh', ['-c', `docker save "$1" | tar -x -C "$2"`, 'sh', image, dir], { maxBuffer: 1 << 20 });
    const [saved] = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Array<{ Config: string; Layers: string[] }>;
    const config = await readFile(join(dir, saved!.Config));
    blobs.set(sha256(config), config);
    const layers = [];
    for (const l of saved!.Layers) {
      const gz = gzipSync(await readFile(join(dir, l)), { level: 1 });
      blobs.set(sha256(gz), gz);
      layers.push({ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', size: gz.length, digest: sha256(gz) });
    }
    manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
        config: { mediaType: 'application/vnd.docker.container.image.v1+json', size: config.length, digest: sha256(config) },
        layers,
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const manifestDigest = sha256(manifest);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    requests.push(`${req.method} ${path}`);
    if (path === '/v2/' || path === '/v2') return res.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end('{}');
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
    let body: Buffer | undefined;
    let type = 'application/octet-stream';
    if (m && m[1] === repo && m[2] === 'manifests' && (m[3] === tag || m[3] === manifestDigest)) {
      body = manifest;
      type = 'application/vnd.docker.distribution.manifest.v2+json';
    } else if (m && m[1] === repo && m[2] === 'blobs') body = blobs.get(m[3]!);
    if (!body) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"code":"NOT_FOUND","message":"not found"}]}');
    res.writeHead(200, {
      'content-type': type,
      'content-length': body.length,
      'docker-content-digest': m![2] === 'manifests' ? manifestDigest : m![3]!,
      'docker-distribution-api-version': 'registry/2.0',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
