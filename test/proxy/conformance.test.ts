import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runConformance } from '../helpers/conformance.js';
import { startThv } from '../helpers/thv.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.ts', import.meta.url));
// The fixture is TypeScript; a tiny launcher runs it with tsx so that thv can start it as an executable.
const LAUNCHER = fileURLToPath(new URL('../fixtures/conformance-server.sh', import.meta.url));

function assertAllPassed(result: Awaited<ReturnType<typeof runConformance>>): void {
  assert.deepEqual(result.failures, [], `failed checks:\n${result.failures.join('\n')}`);
  assert.equal(result.failed, 0);
  assert.ok(result.total >= 40, `only ${result.total} checks ran`);
}

describe('MCP conformance suite through thv', () => {
  it('stdio server behind the stdio bridge (thv run --runtime process --foreground): every check passes', async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', LAUNCHER, '--', FIXTURE, '--stdio']);
    try {
      const result = await runConformance(thv.url, { timeoutMs: 600_000 });
      assertAllPassed(result);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });

  it('Streamable HTTP server behind the transparent proxy: every check passes', async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', '--transport', 'streamable-http', LAUNCHER, '--', FIXTURE, '--http']);
    try {
      const result = await runConformance(thv.url, { timeoutMs: 600_000 });
      assertAllPassed(result);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });
});
