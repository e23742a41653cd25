/**
 * `thv run npx://<package>` with the container runtime: the image is built through the engine's build API
 * from generated build files (base: the locally imported node image, via --runtime-image), the build's
 * progress shows on stderr, and the server runs and answers. A build that cannot succeed says why.
 * The package comes from the npm registry (reachable from the build containers here).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ensureEngine, nodeBaseImage, toolhiveResources } from '../helpers/docker.js';
import { openSession, post, runThv, startThv } from '../helpers/thv.js';

const PACKAGE = '@modelcontextprotocol/server-everything@2026.8.31';

describe('npx:// builds through the engine', () => {
  let base: string;
  const built: string[] = [];
  before(async () => {
    base = await nodeBaseImage();
  });
  after(async () => {
    const docker = await ensureEngine();
    for (const tag of built) await docker.getImage(tag).remove({ force: true }).catch(() => {});
  });

  it('builds the package into an image, with visible progress, and serves it', async () => {
    const name = `npx-build-${process.pid}`;
    const thv = await startThv(
      ['run', '--runtime', 'docker', '--foreground', '--isolate-network=false', '--transport', 'stdio', '--name', name, '--runtime-image', base, `npx://${PACKAGE}`],
      { timeoutMs: 600_000 },
    );
    try {
      const stderr = thv.stderr();
      const tag = /Successfully built (toolhivelocal\/npx-modelcontextprotocol-server-everything:\d{14})/.exec(stderr)?.[1];
      assert.ok(tag, `no "Successfully built toolhivelocal/…" line in:\n${stderr.slice(-3000)}`);
      built.push(tag);
      assert.match(stderr, /Step 1\/\d+ : FROM /, 'the build steps are shown');
      assert.match(stderr, /npm install --save/);
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
    let left = await toolhiveResources(docker, name);
    while (left.containers.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      left = await toolhiveResources(docker, name);
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
