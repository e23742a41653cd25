import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { analysePolicy, matches, type PolicyFacts } from './analysis.js';
import { AuthzConfigError, optionsKey, type AuthzConfig, type CedarOptions } from './config.js';
import { parseStaticEntities, type StaticEntities } from './entities.js';
import {
  AuthzRequestError,
  buildPrincipal,
  buildRequest,
  uidKey,
  type AuthzRequest,
  type BuiltRequest,
  type CedarEntity,
  type PrincipalPart,
} from './request.js';

/**
 * Cedar decisions with the official engine (cedar-wasm). Deny unless at least one permit is satisfied,
 * no forbid is, and NO policy errored (ToolHive denies on any evaluation error; cedar-wasm would still
 * say "allow" when a permit holds and another policy errors).
 *
 * Two ways to ask:
 * - `authorize` (the proxy): pre-parsed policy sets sliced by scope, and a bounded decision cache
 *   keyed by exactly what the sliced policies can read (see analysis.ts). Same decisions as the engine
 *   called on the whole set; the benchmark checks it on every request.
 * - `explain` (the test runner, `thv authz check`): the engine on the whole set, with the policies
 *   that decided and every evaluation error.
 */

export interface Explanation {
  decision: 'allow' | 'deny';
  /** Policy ids that determined the decision (the satisfied permits, or the satisfied forbids). */
  policies: string[];
  /** Evaluation errors (each one forces deny), and request errors such as a missing sub. */
  errors: string[];
}

export interface AuthorizerOptions {
  /** Bound of the decision cache (entries). 0 disables it. */
  cacheSize?: number;
}

const DEFAULT_CACHE_SIZE = 20_000;
/** Beyond this many distinct candidate lists, requests use the whole set (still exact, just slower). */
const MAX_SLICES = 256;
/** A candidate list gets its own pre-parsed set once this many cache misses needed it. */
const PARSE_AFTER = 4;
/** Bound of the memo of candidates per (principal, groups, action, resource, server). */
const MAX_SLICE_KEYS = 50_000;

let instances = 0;

interface Slice {
  /** Candidate policy ids, joined: names the pre-parsed set of this slice. */
  ids: string[];
  idsKey: string;
  /** Fewer candidates than policies (otherwise the whole set is used). */
  partial: boolean;
  hasPermit: boolean;
  reads: PolicyFacts['reads'];
  /** Prefix of every cache key of this slice. */
  key: string;
}

export class CedarAuthorizer {
  readonly options: CedarOptions;
  private readonly policies: Record<string, string> = {};
  private readonly facts: PolicyFacts[] = [];
  private readonly entities: StaticEntities;
  private readonly prefix: string;
  private readonly fullSetId: string;
  private readonly slices = new Map<string, Slice>();
  /** Candidate policy ids (joined) → pre-parsed set id (undefined: use the whole set). */
  private readonly psets = new Map<string, string>();
  /** How often a candidate list was needed before it got its own pre-parsed set. */
  private readonly psetSeen = new Map<string, number>();
  private readonly cache = new Map<string, boolean>();
  private readonly cacheSize: number;
  private readonly principals = new WeakMap<object, PrincipalPart | AuthzRequestError>();
  private readonly localPrincipals = new WeakMap<object, PrincipalPart | AuthzRequestError>();
  private readonly actionEntities = new Map<string, CedarEntity>();

  /** Parses and checks every policy and the entities; throws AuthzConfigError with a location. */
  constructor(config: AuthzConfig, options: AuthorizerOptions = {}) {
    this.options = config.options;
    this.cacheSize = options.cacheSize ?? DEFAULT_CACHE_SIZE;
    const key = optionsKey(config.type);
    config.options.policies.forEach((text, i) => {
      const id = `policy${i}`;
      const path = [key, 'policies', i];
      const parts = cedar.policySetTextToParts(text);
      if (parts.type === 'failure') {
        const first = parts.errors[0];
        throw new AuthzConfigError(`${id}: ${describeCedarError(first)}`, { path, offset: first?.sourceLocations?.[0]?.start });
      }
      if (parts.policies.length !== 1 || parts.policy_templates.length !== 0) {
        throw new AuthzConfigError(`${id}: expected exactly one policy, found ${parts.policies.length + parts.policy_templates.length}`, { path });
      }
      const json = cedar.policyToJson(text);
      if (json.type === 'failure') {
        const first = json.errors[0];
        throw new AuthzConfigError(`${id}: ${describeCedarError(first)}`, { path, offset: first?.sourceLocations?.[0]?.start });
      }
      this.policies[id] = text;
      this.facts.push(analysePolicy(id, json.json as unknown as Record<string, unknown>));
    });
    this.entities = parseStaticEntities(config.options.entitiesJson, [key, 'entities_json']);
    this.prefix = `thv-authz-${++instances}-`;
    this.fullSetId = `${this.prefix}all`;
    const parsed = cedar.preparsePolicySet(this.fullSetId, { staticPolicies: this.policies });
    if (parsed.type === 'failure') throw new AuthzConfigError(parsed.errors.map(describeCedarError).join('; '), { path: [key, 'policies'] });
    for (const action of ['call_tool', 'get_prompt', 'read_resource']) {
      this.actionEntities.set(action, { uid: { type: 'Action', id: action }, attrs: { operation: action }, parents: [], tags: {} });
    }
  }

  /** The fast decision used by the proxy. Never throws: any error is a deny. */
  authorize(req: AuthzRequest): boolean {
    try {
      const principal = this.principalFor(req);
      if (principal instanceof AuthzRequestError) return false;
      const built = buildRequest(req, principal);
      const slice = this.sliceFor(built);
      if (!slice.hasPermit) return false;
      const key = this.cacheSize > 0 ? cacheKey(slice, built) : undefined;
      if (key !== undefined) {
        const hit = this.cache.get(key);
        if (hit !== undefined) return hit;
      }
      const allow = isAllow(this.evaluate(built, this.psetFor(slice)));
      if (key !== undefined) {
        if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
        this.cache.set(key, allow);
      }
      return allow;
    } catch {
      return false;
    }
  }

  /** The engine on the whole policy set, as a naive integration would call it (for the benchmark). */
  authorizeNaive(req: AuthzRequest): boolean {
    try {
      const built = buildRequest(req, buildPrincipal(req.claims, this.options, req.localClaims === true));
      return isAllow(
        cedar.isAuthorized({
          principal: built.principal.uid,
          action: { type: 'Action', id: built.action },
          resource: built.resource,
          context: built.context as cedar.Context,
          entities: this.entitiesFor(built) as unknown as cedar.Entities,
          policies: { staticPolicies: this.policies },
        }),
      );
    } catch {
      return false;
    }
  }

  /** Decision, deciding policies and errors, from the engine on the whole set. */
  explain(req: AuthzRequest): Explanation {
    let built: BuiltRequest;
    try {
      built = buildRequest(req, buildPrincipal(req.claims, this.options, req.localClaims === true));
    } catch (err) {
      return { decision: 'deny', policies: [], errors: [(err as Error).message] };
    }
    const answer = this.evaluate(built, this.fullSetId);
    if (answer.type === 'failure') return { decision: 'deny', policies: [], errors: answer.errors.map(describeCedarError) };
    const d = answer.response.diagnostics;
    const errors = d.errors.map((e) => `${e.policyId}: ${describeCedarError(e.error)}`);
    return {
      decision: isAllow(answer) ? 'allow' : 'deny',
      policies: [...d.reason].sort(byPolicyNumber),
      errors: errors.sort(),
    };
  }

  /** Number of cached decisions (for tests and the benchmark). */
  get cachedDecisions(): number {
    return this.cache.size;
  }

  private principalFor(req: AuthzRequest): PrincipalPart | AuthzRequestError {
    const memo = req.localClaims === true ? this.localPrincipals : this.principals;
    const known = memo.get(req.claims);
    if (known !== undefined) return known;
    let part: PrincipalPart | AuthzRequestError;
    try {
      part = buildPrincipal(req.claims, this.options, req.localClaims === true);
    } catch (err) {
      if (!(err instanceof AuthzRequestError)) throw err;
      part = err;
    }
    memo.set(req.claims, part);
    return part;
  }

  private evaluate(built: BuiltRequest, psetId: string): cedar.AuthorizationAnswer {
    return cedar.statefulIsAuthorized({
      principal: built.principal.uid,
      action: { type: 'Action', id: built.action },
      resource: built.resource,
      context: built.context as cedar.Context,
      entities: this.entitiesFor(built) as unknown as cedar.Entities,
      preparsedPolicySetId: psetId,
    });
  }

  /** Static entities overlaid by the three request entities (same uid: the request's replaces it). */
  private entitiesFor(built: BuiltRequest): CedarEntity[] {
    const principal: CedarEntity = { uid: built.principal.uid, attrs: built.principal.attrs, parents: built.principal.parents, tags: {} };
    const action = this.actionEntities.get(built.action)!;
    const resource: CedarEntity = { uid: built.resource, attrs: built.resourceAttrs, parents: built.resourceParents, tags: {} };
    const statics = this.entities.list;
    if (statics.length === 0) return [principal, action, resource];
    const keys = this.entities.keys;
    const pk = uidKey(principal.uid.type, principal.uid.id);
    const ak = uidKey('Action', built.action);
    const rk = uidKey(built.resource.type, built.resource.id);
    if (!keys.has(pk) && !keys.has(ak) && !keys.has(rk)) return [...statics, principal, action, resource];
    return [...statics.filter((e) => { const k = uidKey(e.uid.type, e.uid.id); return k !== pk && k !== ak && k !== rk; }), principal, action, resource];
  }

  /**
   * The pre-parsed set for a slice's candidates. Parsing costs far more than a decision, so a list of
   * candidates gets its own set only once it has been needed PARSE_AFTER times (cache misses); until
   * then, and beyond MAX_SLICES lists, the whole set is used (same decision, a little slower).
   */
  private psetFor(slice: Slice): string {
    if (!slice.partial) return this.fullSetId;
    const known = this.psets.get(slice.idsKey);
    if (known !== undefined) return known;
    const seen = (this.psetSeen.get(slice.idsKey) ?? 0) + 1;
    if (seen < PARSE_AFTER || this.psets.size >= MAX_SLICES) {
      if (this.psetSeen.size < MAX_SLICE_KEYS) this.psetSeen.set(slice.idsKey, seen);
      return this.fullSetId;
    }
    this.psetSeen.delete(slice.idsKey);
    const id = `${this.prefix}s${this.psets.size}`;
    const subset: Record<string, string> = {};
    for (const p of slice.ids) subset[p] = this.policies[p]!;
    const psetId = cedar.preparsePolicySet(id, { staticPolicies: subset }).type === 'success' ? id : this.fullSetId;
    this.psets.set(slice.idsKey, psetId);
    return psetId;
  }

  /** The policies whose scope can match this request (memoised per principal, groups, action, resource). */
  private sliceFor(built: BuiltRequest): Slice {
    const p = built.principal;
    const sliceKey = `${p.uid.id}\u0001${p.parentKeys.join('\u0002')}\u0001${built.action}\u0001${built.resource.type}\u0001${built.resource.id}\u0001${built.serverName}`;
    const known = this.slices.get(sliceKey);
    if (known) return known;
    const pKey = uidKey('Client', p.uid.id);
    const pAnc = new Set<string>(p.parentKeys);
    for (const k of p.parentKeys) for (const a of this.entities.ancestors(k)) pAnc.add(a);
    const rKey = uidKey(built.resource.type, built.resource.id);
    const rAnc = new Set<string>();
    for (const parent of built.resourceParents) {
      const k = uidKey(parent.type, parent.id);
      rAnc.add(k);
      for (const a of this.entities.ancestors(k)) rAnc.add(a);
    }
    const aKey = uidKey('Action', built.action);
    const ids: string[] = [];
    let hasPermit = false;
    const reads: PolicyFacts['reads'] = { principal: new Set(), resource: new Set(), context: new Set() };
    let usesPrincipal = false;
    let usesResource = false;
    for (const f of this.facts) {
      if (!matches(f.principal, pKey, 'Client', pAnc)) continue;
      if (!matchesAction(f.action, aKey)) continue;
      if (!matches(f.resource, rKey, built.resource.type, rAnc)) continue;
      ids.push(f.id);
      if (f.effect === 'permit') hasPermit = true;
      if (f.usesPrincipal) usesPrincipal = true;
      if (f.usesResource) usesResource = true;
      for (const v of ['principal', 'resource', 'context'] as const) {
        const from = f.reads[v];
        const into = reads[v];
        if (from === 'all' || into === 'all') reads[v] = 'all';
        else for (const a of from) into.add(a);
      }
    }
    const idsKey = ids.join(',');
    // The cache key names the principal / resource only when a candidate's conditions use them.
    let key = `${built.action}\u0003${idsKey}`;
    if (usesPrincipal) key += `\u0003${p.uid.id}\u0001${p.parentKeys.join('\u0002')}`;
    else key += '\u0003';
    if (usesResource) key += `\u0003${built.resource.type}\u0001${built.resource.id}\u0001${built.serverName}`;
    else key += '\u0003';
    const slice: Slice = { ids, idsKey, partial: ids.length < this.facts.length, hasPermit, reads, key };
    if (this.slices.size >= MAX_SLICE_KEYS) this.slices.clear();
    this.slices.set(sliceKey, slice);
    return slice;
  }
}

function matchesAction(c: PolicyFacts['action'], key: string): boolean {
  // The request's action entity has no parents, so `in` is equality with one of the listed actions.
  switch (c.op) {
    case 'any':
      return true;
    case 'eq':
    case 'in':
      return c.uids.includes(key);
    case 'is':
      return c.type === 'Action';
  }
}

function project(attrs: Record<string, unknown>, reads: Set<string> | 'all'): string {
  if (reads === 'all') return JSON.stringify(attrs);
  let out = '';
  for (const a of reads) {
    const v = attrs[a];
    out += v === undefined ? '\u0004' : JSON.stringify(v);
    out += '\u0005';
  }
  return out;
}

function cacheKey(slice: Slice, built: BuiltRequest): string {
  return `${slice.key}\u0006${project(built.principal.attrs, slice.reads.principal)}\u0006${project(built.resourceAttrs, slice.reads.resource)}\u0006${project(built.context, slice.reads.context)}`;
}

function isAllow(answer: cedar.AuthorizationAnswer): boolean {
  return answer.type === 'success' && answer.response.decision === 'allow' && answer.response.diagnostics.errors.length === 0;
}

function byPolicyNumber(a: string, b: string): number {
  return Number(a.replace(/^policy/, '')) - Number(b.replace(/^policy/, ''));
}

export function describeCedarError(e: cedar.DetailedError | undefined): string {
  if (e === undefined) return 'unknown error';
  return e.help ? `${e.message} (${e.help})` : e.message;
}
