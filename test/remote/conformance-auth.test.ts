/**
 * The official MCP conformance suite's client authorization scenarios (`conformance client --suite auth`,
 * plus the 2025-03-26 fallbacks and the draft scenarios run one by one),
 * with thv as the client: conformance-client.mjs runs `thv run <url> --remote-auth-skip-browser`, completes
 * each printed authorization URL, and calls the suite's tool through thv's local proxy.
 *
 * Every scenario must record results and no check may fail. One WARNING is expected and allowed:
 * `cimd-client-id-used` in auth/basic-cimd, because thv presents ToolHive's client ID metadata document
 * URL, not the suite's own (docs/differences.md).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { runConformanceCli } from '../helpers/conformance.js';

const WRAPPER = fileURLToPath(new URL('./conformance-client.mjs', import.meta.url));
const ALLOWED_WARNINGS = new Set(['auth/basic-cimd: cimd-client-id-used']);
const EXTRA_SCENARIOS = [
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
];
/** Where the client must not get through: the remote never grants the scope; the metadata names another resource. */
const NO_TOOL_CALL = new Set(['auth/scope-retry-limit', 'auth/resource-mismatch']);

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  description?: string;
}

describe('conformance client --suite auth, with thv run <url> as the client', () => {
  const work = mkdtempSync(join(tmpdir(), 'thv-conformance-auth-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('passes every authorization scenario, with no token in thv output', async () => {
    const outDir = join(work, 'results');
    const log = join(work, 'client.log');
    const run = async (selection: string[]) => {
      const outcome = await runConformanceCli(
        ['client', '--command', `${process.execPath} ${WRAPPER}`, ...selection, '-o', outDir],
        300_000,
        { THV_CONFORMANCE_NODE: process.execPath, THV_CONFORMANCE_LOG: log },
      );
      assert.equal(outcome.timedOut, false, `the suite timed out:\n${outcome.output.slice(-3000)}`);
      return outcome.output;
    };
    // The suite's summary names every scenario it ran.
    const suite = await run(['--suite', 'auth']);
    const scenarios = [...suite.matchAll(/^[✓✗] (auth\/\S+): \d+ passed/gm)].map((m) => m[1]!);
    assert.ok(scenarios.length >= 14, `expected the auth suite's scenarios, got ${scenarios.length}:\n${suite.slice(-3000)}`);
    // Scenarios outside the suite: the 2025-03-26 revision's fallbacks, and draft ones.
    for (const extra of EXTRA_SCENARIOS) {
      await run(['--scenario', extra]);
      scenarios.push(extra);
    }

    const failures: string[] = [];
    const warnings: string[] = [];
    for (const scenario of scenarios) {
      const [group, name] = scenario.split('/') as [string, string];
      const dir = join(outDir, group);
      const runs = existsSync(dir) ? readdirSync(dir).filter((d) => d.startsWith(`${name}-2`)) : [];
      if (runs.length !== 1) {
        failures.push(`${scenario}: ${runs.length} result directories`);
        continue;
      }
      const checks = JSON.parse(readFileSync(join(dir, runs[0]!, 'checks.json'), 'utf8')) as Check[];
      if (!checks.some((c) => c.status === 'SUCCESS')) failures.push(`${scenario}: no check passed`);
      for (const c of checks) {
        if (c.status === 'FAILURE') failures.push(`${scenario}: ${c.id}: ${c.errorMessage ?? c.description}`);
        if (c.status === 'WARNING') warnings.push(`${scenario}: ${c.id}`);
      }
    }
    const clientLog = existsSync(log) ? readFileSync(log, 'utf8') : '';
    assert.deepEqual(failures, [], `failed checks:\n${failures.join('\n')}\n\nclient log:\n${clientLog.slice(-5000)}`);
    assert.deepEqual(warnings.filter((w) => !ALLOWED_WARNINGS.has(w)), [], 'unexpected warnings');
    // Every scenario got as far as a tool call through thv's proxy.
    for (const scenario of scenarios) {
      const called = clientLog.includes(`[${scenario}] tool called through thv`);
      assert.equal(called, !NO_TOOL_CALL.has(scenario), `${scenario}: tool call ${called ? 'went through' : 'did not go through'}:\n${clientLog.slice(-3000)}`);
    }
    // The suite's authorization server issues tokens named test-token-<n>: none may reach thv's output.
    assert.doesNotMatch(clientLog, /test-token-\d/, 'an access token appears in thv output');
  });
});
