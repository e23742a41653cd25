import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ErrorCodes, ThvError } from '../errors.js';
import type { CedarAuthorizer } from './engine.js';
import { filterListResult, routeMethod, type ItemDecision, type ListKind } from './mcp.js';
import { isRecord } from './config.js';
import type { ToolAnnotations } from './request.js';

/**
 * The policy test runner's cases (`thv authz test`) and the single check (`thv authz check`). A case
 * is decided exactly as the proxy decides the same request: same method routing, same Cedar request,
 * same list filtering — but through the engine on the whole policy set, so that the output can name
 * the deciding policies and every evaluation error.
 */

export interface AuthzCase {
  name: string;
  /** The caller's token claims. */
  claims: Record<string, unknown>;
  request: { method: string; params?: unknown };
  server_name?: string;
  /** The tool's annotations as tools/list reported them (tools/call). */
  annotations?: ToolAnnotations;
  /** List methods: the server's result before filtering (`{tools: [...]}` or a whole JSON-RPC response). */
  response?: unknown;
  /** List methods: the names (URIs for resources) that must be left, exactly. */
  expect_items?: string[];
  expect: 'allow' | 'deny';
}

export interface ItemResult {
  item: string | null;
  decision: 'allow' | 'deny';
  policies: string[];
  errors: string[];
}

export interface CaseResult {
  name: string;
  expect: 'allow' | 'deny';
  decision: 'allow' | 'deny';
  pass: boolean;
  /** Policies that decided (satisfied permits on allow, satisfied forbids on deny). */
  policies: string[];
  errors: string[];
  /** Why the request was decided without policies (always-allowed or denied methods, malformed requests). */
  reason?: string;
  /** List methods with a response: what was left, and each item's decision. */
  items_kept?: string[];
  items?: ItemResult[];
  expect_items?: string[];
}

const LIST_KEY: Record<ListKind, string> = { tools: 'name', prompts: 'name', resources: 'uri' };

/** Decides one case. `defaultServerName` stands in for a missing `server_name`. */
export function evaluateCase(authorizer: CedarAuthorizer, c: AuthzCase, defaultServerName = ''): CaseResult {
  const serverName = c.server_name ?? defaultServerName;
  const route = routeMethod(c.request.method, c.request.params ?? undefined);
  const base = { name: c.name, expect: c.expect };
  const done = (r: Omit<CaseResult, 'name' | 'expect' | 'pass'>, extraPass = true): CaseResult => ({
    ...base,
    ...r,
    pass: r.decision === c.expect && extraPass,
  });
  switch (route.kind) {
    case 'allow':
      return done({ decision: 'allow', policies: [], errors: [], reason: `${c.request.method} is always allowed` });
    case 'deny':
      return done({ decision: 'deny', policies: [], errors: [], reason: route.reason });
    case 'check': {
      const e = authorizer.explain({
        claims: c.claims,
        action: route.action,
        resourceId: route.resourceId,
        arguments: route.arguments,
        annotations: route.action === 'call_tool' ? c.annotations : undefined,
        serverName,
      });
      return done({ decision: e.decision, policies: e.policies, errors: e.errors });
    }
    case 'list': {
      // List requests themselves are never checked; their answers are filtered item by item.
      const reason = `${c.request.method} is forwarded; its items are filtered`;
      if (c.response === undefined) return done({ decision: 'allow', policies: [], errors: [], reason });
      let result: unknown = c.response;
      if (isRecord(result) && result['jsonrpc'] === '2.0' && 'result' in result) result = result['result'] as unknown;
      const decisions: ItemDecision[] = [];
      let kept: string[];
      const errors: string[] = [];
      try {
        const out = filterListResult(authorizer, route.list, result, { claims: c.claims, serverName }, decisions);
        const items = (out as Record<string, unknown>)[route.list] as unknown[];
        kept = items.map((i) => String((i as Record<string, unknown>)[LIST_KEY[route.list]]));
      } catch (err) {
        // The proxy answers with an internal error: nothing is left.
        kept = [];
        errors.push((err as Error).message);
      }
      const items: ItemResult[] = decisions.map((d) => ({
        item: d.id ?? null,
        decision: d.allowed ? 'allow' : 'deny',
        policies: d.explanation?.policies ?? [],
        errors: d.explanation?.errors ?? (d.id === undefined ? ['item has no name'] : []),
      }));
      const itemsMatch = c.expect_items === undefined || sameSet(kept, c.expect_items);
      return done(
        { decision: 'allow', policies: [], errors, reason, items_kept: kept, items, ...(c.expect_items ? { expect_items: c.expect_items } : {}) },
        itemsMatch,
      );
    }
  }
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/** Reads a cases file (`cases: [...]`, YAML or JSON) and checks each case's shape. */
export function loadCases(path: string): AuthzCase[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidArgument, `cannot read the cases file ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `invalid cases file ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  const cases = isRecord(doc) ? doc['cases'] : undefined;
  if (!Array.isArray(cases)) throw new ThvError(ErrorCodes.InvalidConfig, `invalid cases file ${path}: it must hold "cases:", a list`);
  return cases.map((c, i) => checkCase(c, `${path}: case ${i + 1}`));
}

export function checkCase(c: unknown, where: string): AuthzCase {
  const bad = (msg: string): ThvError => new ThvError(ErrorCodes.InvalidConfig, `${where}: ${msg}`);
  if (!isRecord(c)) throw bad('must be an object');
  const name = c['name'];
  if (typeof name !== 'string' || name === '') throw bad('name is required');
  const at = `${where} (${name})`;
  const badAt = (msg: string): ThvError => new ThvError(ErrorCodes.InvalidConfig, `${at}: ${msg}`);
  const expect = c['expect'];
  if (expect !== 'allow' && expect !== 'deny') throw badAt('expect must be allow or deny');
  const request = c['request'];
  if (!isRecord(request) || typeof request['method'] !== 'string') throw badAt('request must be an object with a method');
  const claims = c['claims'] ?? {};
  if (!isRecord(claims)) throw badAt('claims must be an object');
  const server = c['server_name'];
  if (server !== undefined && typeof server !== 'string') throw badAt('server_name must be a string');
  const annotations = c['annotations'];
  if (annotations !== undefined && !isRecord(annotations)) throw badAt('annotations must be an object');
  const items = c['expect_items'];
  if (items !== undefined && (!Array.isArray(items) || items.some((x) => typeof x !== 'string'))) throw badAt('expect_items must be a list of names');
  return {
    name,
    claims,
    request: { method: request['method'] as string, params: request['params'] },
    ...(server !== undefined ? { server_name: server } : {}),
    ...(annotations !== undefined ? { annotations: annotations as ToolAnnotations } : {}),
    ...(c['response'] !== undefined ? { response: c['response'] } : {}),
    ...(items !== undefined ? { expect_items: items as string[] } : {}),
    expect,
  };
}

/** One line per case, as `thv authz test` prints it. */
export function formatCaseLine(r: CaseResult): string {
  const why = r.policies.length > 0 ? ` (${r.policies.join(', ')})` : r.reason ? ` (${r.reason})` : '';
  const errs = r.errors.length > 0 ? ` [errors: ${r.errors.join('; ')}]` : '';
  let items = '';
  if (r.items_kept !== undefined) {
    items = ` items: [${r.items_kept.join(', ')}]`;
    if (r.expect_items !== undefined && !sameSet(r.items_kept, r.expect_items)) items += ` expected [${r.expect_items.join(', ')}]`;
  }
  if (r.pass) return `PASS ${r.name}: ${r.decision}${why}${items}${errs}`;
  return `FAIL ${r.name}: expected ${r.expect}, got ${r.decision}${why}${items}${errs}`;
}
