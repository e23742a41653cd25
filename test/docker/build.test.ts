/**
 * `thv run npx://<package>` with the container runtime: the image is built through the engine's build API
 * from generated build files (base: the locally imported node image, via --runtime-image), the build's
 * progress shows on stderr, and the server runs and answers. `--ca-cert` puts the CA into the image (and
 * the build), `--runtime-add-package` reaches the package install step. A build that cannot succeed says why.
 * The package comes from the npm registry (reachable from the build containers here).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureEngine, nodeBaseImage, removeWorkloadResources, testWorkloadName, workloadResources } from '../helpers/docker.js';
import { openSession, post, runThv, startThv } from '../helpers/thv.js';
import { AttachDemuxer } from '../../src/runtime/docker/demux.js';

const PACKAGE = '@modelcontextprotocol/server-everything@2026.8.31';

describe('npx:// builds through the engine', () => {
  let base: string;
  let dir: string;
  let caPem: string;
  const built: string[] = [];
  before(async () => {
    base = await nodeBaseImage();
    dir = await mkdtemp(join(tmpdir(), 'thv-build-test-'));
    // A CA of our own (never trusted for anything: the build only has to carry it).
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=thv-test-ca'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    caPem = await readFile(join(dir, 'ca.pem'), 'utf8');
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    const docker = await ensureEngine();
    await removeWorkloadResources(docker, testWorkloadName('npxbuild'));
    for (const tag of built) await docker.getImage(tag).remove({ force: true }).catch(() => {});
  });

  it('builds the package into an image, with visible progress, --ca-cert and --runtime-add-package, and serves it', async () => {
    const name = testWorkloadName('npxbuild');
    const thv = await startThv(
      [
        'run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--name', name,
        '--runtime-image', base, '--ca-cert', join(dir, 'ca.pem'), '--runtime-add-package', 'curl', `npx://${PACKAGE}`,
      ],
      { timeoutMs: 600_000 },
    );
    try {
      const stderr = thv.stderr();
      const tag = /Successfully built (toolhivelocal\/npx-modelcontextprotocol-server-everything:\d{14})/.exec(stderr)?.[1];
      assert.ok(tag, `no "Successfully built toolhivelocal/…" line in:\n${stderr.slice(-3000)}`);
      built.push(tag);
      assert.match(stderr, /Step 1\/\d+ : FROM /, 'the build steps are shown');
      assert.match(stderr, /npm install --save/);
      assert.match(stderr, /COPY ca-cert\.crt/, 'the CA is part of the build');
      // The imported test base has no apk/apt-get: the install step runs and says what it could not install.
      assert.match(stderr, /no package manager in the base image; not installing: git ca-certificates curl/);
      const docker = await ensureEngine();
      const env = (await docker.getImage(tag).inspect()).Config.Env ?? [];
      // Node reads the system bundle (with the CA appended), so what the base image trusted stays trusted:
      // behind a TLS-inspecting proxy (whose CA the base has), npm install works only because of that.
      assert.ok(env.includes('NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'), env.join('\n'));
      assert.equal(await fileInImage(docker, tag, '/usr/local/share/ca-certificates/thv-ca.crt'), caPem);
      assert.ok((await fileInImage(docker, tag, '/etc/ssl/certs/ca-certificates.crt')).includes(caPem.trim()), 'the CA is in the system bundle');
      const sid = await openSession(thv.url);
      const res = await post(thv.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid });
      const body = await res.text();
      assert.equal(res.status, 200, body);
      assert.match(body, /"name":"echo"/);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
    const docker = await ensureEngine();
    const deadline = Date.now() + 15_000;
    let left = await workloadResources(docker, name);
    while (left.containers.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      left = await workloadResources(docker, name);
    }
    assert.deepEqual(left.containers, []);
  });

  it('a package that does not exist fails the build and says why', async () => {
    const r = await runThv(
      ['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--runtime-image', base, 'npx://@thv-test-nonexistent/no-such-package-4711@1.0.0'],
      { timeoutMs: 300_000 },
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /building the image for npx:\/\/@thv-test-nonexistent\/no-such-package-4711@1\.0\.0 failed/);
    // The npm error is part of what the user sees.
    assert.match(r.stderr, /E404|404 Not Found|not found/i);
  });

  it('a base image that is not available fails with a clear message', async () => {
    const r = await runThv(
      ['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--runtime-image', 'thv-test/no-such-base:1', `npx://${PACKAGE}`],
      { timeoutMs: 120_000 },
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /building the image for npx:\/\/.* failed: .*thv-test\/no-such-base/);
  });
});

/** A file's content in an image (a throwaway container running `cat`, read back from its logs). */
async function fileInImage(docker: Awaited<ReturnType<typeof ensureEngine>>, image: string, path: string): Promise<string> {
  // Named like the test's workload, so a sweep after a killed run removes it too.
  const name = `${testWorkloadName('npxbuild')}-cat${Math.random().toString(16).slice(2, 10)}`;
  const c = await docker.createContainer({ name, Image: image, Entrypoint: ['cat', path], HostConfig: { NetworkMode: 'none' } });
  try {
    await c.start();
    const { StatusCode } = (await c.wait()) as { StatusCode: number };
    const raw = (await c.logs({ stdout: true, stderr: true })) as unknown as Buffer;
    let out = '';
    let err = '';
    new AttachDemuxer((t) => (out += t), (t) => (err += t)).push(raw);
    assert.equal(StatusCode, 0, `cat ${path} in ${image}: ${err}`);
    return out;
  } finally {
    await c.remove({ force: true }).catch(() => {});
  }
}
