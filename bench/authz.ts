/**
 * Cedar authorization cost, on a realistic mix (issue 5, point 3).
 *
 *   node --import tsx bench/authz.ts [--requests 20000] [--rounds 5] [--naive-sample 3000] [--assert] [--json]
 *
 * The mix: 5 principals (token claims with groups, roles, scopes, an email), 40 tools (some with
 * annotations), 3 prompts and resources, 20 policies in the style of ToolHive's examples (tool names,
 * groups and a role hierarchy from entities_json, annotations guarded with `has`, argument conditions
 * on strings and decimals, claim conditions, forbids), and requests with varied arguments (free text,
 * numbers, nested objects; only some of them read by policies). Each request goes the proxy's way:
 * method routing, then the authorizer's fast path (scope slicing + decision cache on what the policies
 * read) — see src/authz/engine.ts.
 *
 * Prints, for the proxy's path, the median / p90 / p99 cost per decision (median of the rounds'
 * medians, a fresh authorizer per round so each round pays its cold misses), the cost of the engine
 * called naively (`isAuthorized` with the policy text, per decision), the cost of filtering a 100-tool
 * tools/list (cold, and median warm), and checks that the fast path decides exactly like the naive
 * call on EVERY request of the mix (and on every list item). Targets: median decision < 25 µs,
 * 100-tool list filter < 1 ms, zero mismatches. `--assert` exits 1 when one is missed.
 */
import { parseArgs } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseAuthzConfig } from '../src/authz/config.js';
import { CedarAuthorizer } from '../src/authz/engine.js';
import { filterListResult, itemRequest, routeMethod } from '../src/authz/mcp.js';
import type { AuthzRequest, ToolAnnotations } from '../src/authz/request.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    'naive-sample': { type: 'string', default: '3000' },
    assert: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const N = Number(values.requests);
const ROUNDS = Number(values.rounds);
const NAIVE_SAMPLE = Number(values['naive-sample']);

// ---------------------------------------------------------------------------------------------------
// The mix (seeded, so every run measures the same requests)

let seed = 20261122;
function rnd(n: number): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed % n;
}
const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;

const TOOLS: Array<{ name: string; annotations?: ToolAnnotations }> = [];
for (let i = 0; i < 40; i++) {
  const kind = i % 5;
  const annotations: ToolAnnotations | undefined =
    kind === 0 ? { readOnlyHint: true } : kind === 1 ? { destructiveHint: true } : kind === 2 ? { readOnlyHint: false, idempotentHint: true } : kind === 3 ? { openWorldHint: true } : undefined;
  const prefix = ['github', 'fs', 'db', 'web', 'deploy'][i % 5]!;
  TOOLS.push({ name: `${prefix}_tool_${i}`, ...(annotations ? { annotations } : {}) });
}
const PROMPTS = ['summarise', 'review', 'incident_report'];
const RESOURCES = ['file:///repo/README.md', 'file:///repo/src/index.ts', 'file:///etc/secrets.env', 'db://prod/users'];

const POLICIES = [
  // Everyone: read-only tools (annotation, guarded) and a few named tools.
  'permit(principal, action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
  'permit(principal, action == Action::"call_tool", resource) when { [Tool::"web_tool_3", Tool::"web_tool_8", Tool::"web_tool_13"].contains(resource) };',
  // Engineers: github and db tools; fs tools only under /tmp or /workspace.
  'permit(principal in THVGroup::"engineering", action == Action::"call_tool", resource) when { resource.name like "github_*" };',
  'permit(principal in THVGroup::"engineering", action == Action::"call_tool", resource) when { resource.name like "db_*" && context has arg_limit && context.arg_limit.lessThanOrEqual(decimal("100.0")) };',
  'permit(principal in THVGroup::"engineering", action == Action::"call_tool", resource) when { resource.name like "fs_*" && context has arg_path && (context.arg_path like "/tmp/*" || context.arg_path like "/workspace/*") };',
  // Deployers: deploy tools to staging; admins anywhere.
  'permit(principal in THVRole::"deployer", action == Action::"call_tool", resource) when { resource.name like "deploy_*" && context has arg_env && context.arg_env == "staging" };',
  'permit(principal in THVRole::"admin", action, resource);',
  // Scopes (multi-valued claim) and email domain.
  'permit(principal, action == Action::"call_tool", resource == Tool::"web_tool_18") when { context has claimset_scope && context.claimset_scope.contains("web:write") };',
  'permit(principal, action == Action::"get_prompt", resource) when { context.claim_email like "*@acme.example" };',
  'permit(principal in THVGroup::"sre", action == Action::"get_prompt", resource == Prompt::"incident_report");',
  // Resources.
  'permit(principal, action == Action::"read_resource", resource) when { resource.uri like "file:///repo/*" };',
  'permit(principal in THVGroup::"sre", action == Action::"read_resource", resource in MCP::"bench");',
  // Forbids: destructive tools outside admins, secrets, a blocked user, huge limits, prod deploys.
  'forbid(principal, action == Action::"call_tool", resource) when { resource has destructiveHint && resource.destructiveHint } unless { principal in THVRole::"admin" };',
  'forbid(principal, action == Action::"read_resource", resource) when { resource.uri like "*secrets*" };',
  'forbid(principal == Client::"mallory", action, resource);',
  'forbid(principal, action == Action::"call_tool", resource) when { context has arg_limit && context.arg_limit.greaterThan(decimal("1000.0")) };',
  'forbid(principal, action == Action::"call_tool", resource) when { context has arg_env && context.arg_env == "prod" } unless { principal in THVRole::"admin" };',
  // Contractors: only read-only tools, never db.
  'forbid(principal in THVGroup::"contractors", action == Action::"call_tool", resource) when { resource.name like "db_*" };',
  // A policy that errors when an argument has the wrong type (string vs decimal): deny.
  'permit(principal, action == Action::"call_tool", resource == Tool::"db_tool_22") when { context.arg_limit.lessThan(decimal("10.0")) };',
  'permit(principal in THVGroup::"engineering", action == Action::"get_prompt", resource == Prompt::"review") when { principal.claim_org == "acme" };',
];

const ENTITIES = JSON.stringify([
  { uid: { type: 'THVGroup', id: 'platform' }, attrs: {}, parents: [{ type: 'THVRole', id: 'deployer' }] },
  { uid: { type: 'THVGroup', id: 'ops-admins' }, attrs: {}, parents: [{ type: 'THVRole', id: 'admin' }] },
  { uid: { type: 'THVRole', id: 'admin' }, attrs: {}, parents: [{ type: 'THVRole', id: 'deployer' }] },
  { uid: { type: 'MCP', id: 'bench' }, attrs: { env: 'prod' }, parents: [] },
]);

const CONFIG = parseAuthzConfig({
  version: '1.0',
  type: 'cedarv1',
  cedar: { policies: POLICIES, entities_json: ENTITIES, group_claim_name: 'groups', role_claim_name: 'roles', multi_valued_claims: ['scope'] },
});

const now = 1_763_800_000;
const PRINCIPALS: Array<Record<string, unknown>> = [
  { sub: 'alice', iss: 'https://idp.acme.example', aud: 'mcp', exp: now + 600, iat: now, email: 'alice@acme.example', org: 'acme', groups: ['engineering', 'platform'], scope: 'openid mcp:read web:write' },
  { sub: 'bob', iss: 'https://idp.acme.example', aud: 'mcp', exp: now + 600, iat: now, email: 'bob@acme.example', org: 'acme', groups: ['sre'], roles: ['oncall'], scope: 'openid mcp:read' },
  { sub: 'carol', iss: 'https://idp.acme.example', aud: 'mcp', exp: now + 600, iat: now, email: 'carol@acme.example', groups: ['ops-admins'], scope: 'openid' },
  { sub: 'dave', iss: 'https://idp.acme.example', aud: 'mcp', exp: now + 600, iat: now, email: 'dave@contractor.example', groups: ['contractors'], scope: 'openid mcp:read' },
  { sub: 'mallory', iss: 'https://idp.acme.example', aud: 'mcp', exp: now + 600, iat: now, email: 'm@evil.example', groups: ['engineering'] },
];

const WORDS = ['alpha', 'beta', 'release notes', 'ünïcode', 'SELECT 1', 'x'.repeat(40), '', 'foo/bar'];
function randomArgs(tool: string): Record<string, unknown> {
  const args: Record<string, unknown> = { query: `${pick(WORDS)} ${rnd(1_000_000)}` };
  if (tool.startsWith('fs_')) args.path = pick(['/tmp/a.txt', '/tmp/b/c.log', '/workspace/src/x.ts', '/etc/passwd', '/workspace/README.md', '/home/u/.ssh/id_rsa']);
  if (tool.startsWith('db_')) args.limit = pick([5, 10, 50, 100, 101, 500, 2000, '10']);
  if (tool.startsWith('deploy_')) args.env = pick(['staging', 'staging', 'prod', 'dev']);
  if (rnd(3) === 0) args.options = { verbose: rnd(2) === 0, depth: rnd(5), tags: ['a', 'b'] };
  if (rnd(4) === 0) args.page = rnd(50);
  if (rnd(5) === 0) args.note = null;
  return args;
}

interface Msg {
  method: string;
  params: Record<string, unknown>;
  claims: Record<string, unknown>;
}

function makeMix(n: number): Msg[] {
  const out: Msg[] = [];
  for (let i = 0; i < n; i++) {
    const claims = pick(PRINCIPALS);
    const r = rnd(100);
    if (r < 80) {
      const tool = pick(TOOLS).name;
      out.push({ method: 'tools/call', params: { name: tool, arguments: randomArgs(tool) }, claims });
    } else if (r < 90) {
      out.push({ method: 'prompts/get', params: { name: pick(PROMPTS), arguments: { topic: pick(WORDS) } }, claims });
    } else {
      out.push({ method: 'resources/read', params: { uri: pick(RESOURCES) }, claims });
    }
  }
  return out;
}

const annotationsByName = new Map(TOOLS.filter((t) => t.annotations).map((t) => [t.name, t.annotations!]));

/** What the authz stage does for one message: route, then build the request (annotations from the cache). */
function requestOf(m: Msg): AuthzRequest | undefined {
  const route = routeMethod(m.method, m.params);
  if (route.kind !== 'check') return undefined;
  return {
    claims: m.claims,
    action: route.action,
    resourceId: route.resourceId,
    arguments: route.arguments,
    annotations: route.action === 'call_tool' ? annotationsByName.get(route.resourceId) : undefined,
    serverName: 'bench',
  };
}

function decideFast(a: CedarAuthorizer, m: Msg): boolean {
  const req = requestOf(m);
  return req === undefined ? false : a.authorize(req);
}

// ---------------------------------------------------------------------------------------------------

function pct(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
const us = (ns: number): string => (ns / 1000).toFixed(1);

const mix = makeMix(N);
// Identity objects are reused per caller, as the auth stage reuses a verified token's identity.
console.log(`authz bench: ${POLICIES.length} policies, ${TOOLS.length} tools, ${PRINCIPALS.length} principals, ${N} requests x ${ROUNDS} rounds (node ${process.version}, load average ${loadavg()[0]!.toFixed(2)} at start)`);

// Warm the JIT and wasm on a separate authorizer.
{
  const warm = new CedarAuthorizer(CONFIG);
  for (let i = 0; i < 3000; i++) decideFast(warm, mix[i % mix.length]!);
  for (let i = 0; i < 300; i++) {
    const r = requestOf(mix[i]!);
    if (r) warm.authorizeNaive(r);
  }
}

// 1. Proxy path, per decision.
const roundMedians: number[] = [];
const roundP90: number[] = [];
const roundP99: number[] = [];
const roundMeans: number[] = [];
let fastDecisions: boolean[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const a = new CedarAuthorizer(CONFIG);
  const times = new Float64Array(N);
  const decisions: boolean[] = new Array<boolean>(N);
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    decisions[i] = decideFast(a, mix[i]!);
    times[i] = Number(process.hrtime.bigint() - t0);
  }
  let sum = 0;
  for (const t of times) sum += t;
  times.sort();
  roundMedians.push(pct(times, 0.5));
  roundP90.push(pct(times, 0.9));
  roundP99.push(pct(times, 0.99));
  roundMeans.push(sum / N);
  if (round === 0) fastDecisions = decisions;
  else if (decisions.some((d, i) => d !== fastDecisions[i])) throw new Error('fast path is not deterministic across rounds');
}
const allowCount = fastDecisions.filter(Boolean).length;

// 2. Naive engine call on every request: identical decisions; timing on a sample.
const checker = new CedarAuthorizer(CONFIG, { cacheSize: 0 });
let mismatches = 0;
const naiveTimes: number[] = [];
for (let i = 0; i < N; i++) {
  const req = requestOf(mix[i]!);
  const t0 = process.hrtime.bigint();
  const naive = req === undefined ? false : checker.authorizeNaive(req);
  const dt = Number(process.hrtime.bigint() - t0);
  if (i < NAIVE_SAMPLE) naiveTimes.push(dt);
  if (naive !== fastDecisions[i]) {
    mismatches++;
    if (mismatches <= 5) console.error(`MISMATCH at ${i}: fast=${fastDecisions[i]} naive=${naive} ${JSON.stringify(mix[i])}`);
  }
}
const naiveSorted = Float64Array.from(naiveTimes).sort();

// 3. tools/list with 100 tools, filtered per caller.
const LIST_TOOLS = Array.from({ length: 100 }, (_, i) => {
  const base = TOOLS[i % TOOLS.length]!;
  const name = i < TOOLS.length ? base.name : `${base.name}_v${Math.floor(i / TOOLS.length)}`;
  return { name, description: `tool ${i}`, inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, ...(base.annotations ? { annotations: base.annotations } : {}) };
});
const listResult = { tools: LIST_TOOLS, nextCursor: 'next' };
const listAuthorizer = new CedarAuthorizer(CONFIG);
const coldList: number[] = [];
const warmList: number[] = [];
let listMismatches = 0;
for (const claims of PRINCIPALS) {
  const caller = { claims, serverName: 'bench' };
  let t0 = process.hrtime.bigint();
  const out = filterListResult(listAuthorizer, 'tools', listResult, caller) as { tools: Array<{ name: string }> };
  coldList.push(Number(process.hrtime.bigint() - t0));
  for (let r = 0; r < 200; r++) {
    t0 = process.hrtime.bigint();
    filterListResult(listAuthorizer, 'tools', listResult, caller);
    warmList.push(Number(process.hrtime.bigint() - t0));
  }
  const kept = new Set(out.tools.map((t) => t.name));
  for (const tool of LIST_TOOLS) {
    const req = itemRequest('tools', tool, caller)!;
    if (checker.authorizeNaive(req) !== kept.has(tool.name)) listMismatches++;
  }
}

const result = {
  loadAverageAtEnd: loadavg()[0],
  policies: POLICIES.length,
  tools: TOOLS.length,
  principals: PRINCIPALS.length,
  requests: N,
  rounds: ROUNDS,
  allowRate: allowCount / N,
  decision_us: { median: roundMedians.map((x) => x / 1000), p90: roundP90.map((x) => x / 1000), p99: roundP99.map((x) => x / 1000), mean: roundMeans.map((x) => x / 1000) },
  naive_us: { median: pct(naiveSorted, 0.5) / 1000, p90: pct(naiveSorted, 0.9) / 1000, p99: pct(naiveSorted, 0.99) / 1000, sample: naiveTimes.length },
  list100_ms: { coldPerCaller: coldList.map((x) => x / 1e6), warmMedian: median(warmList) / 1e6 },
  mismatches,
  listMismatches,
};

const decisionMedian = median(roundMedians);
const listMedian = median(warmList);
console.log(`decisions: ${(100 * allowCount / N).toFixed(1)}% allow`);
console.log(`proxy path per decision (median of ${ROUNDS} rounds): median ${us(decisionMedian)} µs, p90 ${us(median(roundP90))} µs, p99 ${us(median(roundP99))} µs, mean ${us(median(roundMeans))} µs`);
console.log(`  round medians (µs): ${roundMedians.map(us).join(' ')}`);
console.log(`naive engine call (isAuthorized, policy text, ${naiveTimes.length} requests): median ${us(pct(naiveSorted, 0.5))} µs, p90 ${us(pct(naiveSorted, 0.9))} µs, p99 ${us(pct(naiveSorted, 0.99))} µs`);
console.log(`100-tool tools/list filter: cold (first per caller) ${coldList.map((x) => (x / 1e6).toFixed(2)).join(' / ')} ms; warm median ${(listMedian / 1e6).toFixed(3)} ms`);
console.log(`decisions identical to the naive engine call: ${N - mismatches}/${N} requests, ${PRINCIPALS.length * 100 - listMismatches}/${PRINCIPALS.length * 100} list items`);

const checks = [
  { name: 'median decision < 25 µs', ok: decisionMedian < 25_000 },
  { name: '100-tool list filter < 1 ms', ok: listMedian < 1_000_000 },
  { name: 'no mismatch with the naive engine call', ok: mismatches === 0 && listMismatches === 0 },
];
for (const c of checks) console.log(`${c.ok ? 'PASS' : 'FAIL'} ${c.name}`);
if (values.json) {
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(`./results/authz-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
  writeFileSync(file, JSON.stringify(result, null, 2));
  console.log(`wrote ${file.pathname}`);
}
if (values.assert && checks.some((c) => !c.ok)) process.exit(1);
