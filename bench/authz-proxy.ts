/**
 * Proxy throughput with inbound auth (OIDC, real JWT) AND Cedar authorization on, against the same
 * proxy plain (issue 5, point 4: keep at least 70% of plain throughput). The workload is the bridge
 * benchmark's (bench/bridge.ts): `thv run` of server-everything over stdio, one MCP session,
 * `tools/call echo {"message":"hi"}`, 16 requests in flight, unique ids, only answers carrying the
 * echo count.
 *
 *   node --import tsx bench/authz-proxy.ts [--duration 10] [--warmup 2] [--rounds 3] [--connections 16] [--assert]
 *
 * Contenders run one at a time, alternating order each round; the figure is the median over rounds of
 * the per-round ratio (auth+authz req/s ÷ plain req/s). The IdP (oidc-provider over TLS) runs in a
 * child process; the proxy validates its JWT (and caches it), then evaluates a realistic policy set
 * (20 policies, groups, a role hierarchy, argument conditions) for every call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startIdpProcess } from './lib/idp-process.js';
import { closeSession, openSession, runLoad, warmUp } from './lib/mcp-http.js';
import { freePort, killGroup, spawnGroup, tailFile, waitForPort } from './lib/proc.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_BIN = path.join(ROOT, 'node_modules', '.bin', 'mcp-server-everything');
const THV = path.join(ROOT, 'bin', 'thv.js');

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    assert: { type: 'boolean', default: false },
  },
});
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);

const POLICIES = [
  'permit(principal, action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
  'permit(principal in THVGroup::"eng", action == Action::"call_tool", resource == Tool::"echo") when { context has arg_message && context.arg_message like "*" };',
  'permit(principal in THVRole::"admin", action, resource);',
  'permit(principal, action == Action::"call_tool", resource in MCP::"bench") when { context.claim_org == "acme" && context has arg_limit && context.arg_limit.lessThan(decimal("10.0")) };',
  'forbid(principal, action == Action::"call_tool", resource) when { resource has destructiveHint && resource.destructiveHint } unless { principal in THVRole::"admin" };',
  'forbid(principal == Client::"mallory", action, resource);',
  'forbid(principal, action == Action::"call_tool", resource) when { context has arg_env && context.arg_env == "prod" };',
  'permit(principal, action == Action::"get_prompt", resource) when { context.claim_email like "*@example.test" };',
  'permit(principal, action == Action::"read_resource", resource) when { resource.uri like "test://static/*" };',
  ...Array.from({ length: 11 }, (_, i) => `permit(principal in THVGroup::"team${i}", action == Action::"call_tool", resource == Tool::"tool_${i}");`),
];

interface Run {
  rps: number;
  good: number;
  errors: number;
  p50: number;
}

async function measure(label: string, extraArgs: string[], headers: Record<string, string>, logDir: string): Promise<Run> {
  const port = await freePort();
  const logFile = path.join(logDir, `${label}.log`);
  const group = spawnGroup(label, process.execPath, [THV, 'run', '--runtime', 'process', '--foreground', '--transport', 'stdio', '--proxy-port', String(port), '--name', 'bench', ...extraArgs, SERVER_BIN], { logFile, cwd: ROOT });
  try {
    await waitForPort(port, { timeoutMs: 30_000, group });
    const session = await openSession(`http://127.0.0.1:${port}/mcp`, 30_000, headers);
    await warmUp(session, CONNECTIONS, WARMUP);
    const load = await runLoad(session, { connections: CONNECTIONS, seconds: DURATION, firstId: 1 });
    await closeSession(session, 2000);
    return { rps: load.good / load.seconds, good: load.good, errors: load.errors + load.non2xx + load.bad2xx, p50: load.latency.p50 };
  } catch (err) {
    throw new Error(`${label}: ${(err as Error).message}\n${tailFile(logFile, 800)}`);
  } finally {
    await killGroup(group);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'thv-authz-proxy-bench-'));
  const idp = await startIdpProcess();
  try {
    const authz = path.join(dir, 'authz.json');
    writeFileSync(
      authz,
      JSON.stringify({
        version: '1.0',
        type: 'cedarv1',
        cedar: {
          policies: POLICIES,
          entities_json: JSON.stringify([{ uid: { type: 'THVGroup', id: 'ops' }, attrs: {}, parents: [{ type: 'THVRole', id: 'admin' }] }]),
          group_claim_name: 'groups',
        },
      }),
    );
    const { info } = idp;
    const authArgs = ['--oidc-issuer', info.issuer, '--oidc-audience', info.audience, '--thv-ca-bundle', info.caFile, '--jwks-allow-private-ip', '--authz-config', authz];
    const bearer = { Authorization: `Bearer ${info.accessToken}` };
    console.log(`proxy throughput, plain vs OIDC + Cedar (${POLICIES.length} policies): server-everything echo, ${CONNECTIONS} in flight, ${WARMUP}s warm-up + ${DURATION}s per contender, ${ROUNDS} rounds`);
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['plain', 'authz'] as const) : (['authz', 'plain'] as const);
      const results: Record<string, Run> = {};
      for (const which of order) {
        results[which] = which === 'plain' ? await measure(`plain-${r}`, [], {}, dir) : await measure(`authz-${r}`, authArgs, bearer, dir);
      }
      const plain = results['plain']!;
      const secured = results['authz']!;
      if (secured.good === 0) throw new Error('auth+authz run got no good answers (denied?)');
      const ratio = secured.rps / plain.rps;
      ratios.push(ratio);
      console.log(
        `round ${r + 1}: plain ${plain.rps.toFixed(0)} req/s (p50 ${plain.p50.toFixed(2)} ms, errors ${plain.errors}); ` +
          `auth+authz ${secured.rps.toFixed(0)} req/s (p50 ${secured.p50.toFixed(2)} ms, errors ${secured.errors}); ratio ${ratio.toFixed(2)}`,
      );
    }
    const value = median(ratios);
    const pass = value >= 0.7;
    console.log(`auth+authz / plain: ${value.toFixed(2)} (target >= 0.70) ${pass ? 'PASS' : 'FAIL'}`);
    return values.assert && !pass ? 1 : 0;
  } finally {
    await idp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
