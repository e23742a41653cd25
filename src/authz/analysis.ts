/**
 * What a policy can depend on, read from its JSON form (cedar-wasm `policyToJson`). The fast path uses
 * it twice, and both uses are exact (they never change a decision):
 *
 * - Scope: a policy whose scope (principal / action / resource constraint) does not match a request
 *   is neither satisfied nor evaluated (Cedar evaluates the scope first and short-circuits), so it can
 *   be left out of the policy set for that request. No matching permit → deny without the engine.
 * - Attribute reads: once the candidate policies are known (their scopes hold), the decision can only
 *   depend on the action, the attributes the conditions read (`x.attr`, `x has attr`), and the uid and
 *   ancestors of the principal / resource when a condition uses them as values (`==`, `in`, `is`).
 *   A decision cache keyed by exactly those stays exact when other arguments, claims, callers with the
 *   same groups, or tools with the same annotations vary.
 *   Anything the analysis does not understand (an entity literal's attributes, `context` used as a
 *   whole value, …) makes the key include every attribute.
 */

export type Var = 'principal' | 'action' | 'resource' | 'context';

export interface EntityRef {
  type: string;
  id: string;
}

/** A scope constraint, normalised. `any` also covers forms we do not model (the policy stays a candidate). */
export type Constraint =
  | { op: 'any' }
  | { op: 'eq'; uids: string[] }
  | { op: 'in'; uids: string[] }
  | { op: 'is'; type: string; inUid?: string };

export interface PolicyFacts {
  id: string;
  effect: 'permit' | 'forbid';
  principal: Constraint;
  action: Constraint;
  resource: Constraint;
  /** Attributes read per variable; 'all' when the analysis cannot tell. */
  reads: { principal: Set<string> | 'all'; resource: Set<string> | 'all'; context: Set<string> | 'all' };
  /**
   * The conditions use the principal / resource itself (`==`, `in`, `is`, an entity literal of a
   * request type), so the decision can depend on its uid and ancestors, not only on what it reads.
   */
  usesPrincipal: boolean;
  usesResource: boolean;
}

/** Entity types the request entities have: a literal of one of them may name the request's own. */
const REQUEST_TYPES = new Set(['Client', 'Action', 'Tool', 'Prompt', 'Resource']);

function hasRequestEntityLiteral(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some(hasRequestEntityLiteral);
  const o = v as Record<string, unknown>;
  const e = o['__entity'] as { type?: unknown } | undefined;
  if (e && typeof e === 'object' && typeof e.type === 'string') return REQUEST_TYPES.has(e.type) || e.type.includes('::');
  return Object.values(o).some(hasRequestEntityLiteral);
}

function refKey(e: unknown): string | undefined {
  const r = (e as { __entity?: EntityRef } | undefined)?.__entity ?? (e as EntityRef | undefined);
  if (r && typeof r.type === 'string' && typeof r.id === 'string') return `${r.type}\u0000${r.id}`;
  return undefined;
}

function constraint(c: unknown): Constraint {
  if (c === null || typeof c !== 'object') return { op: 'any' };
  const o = c as Record<string, unknown>;
  switch (o['op']) {
    case 'All':
      return { op: 'any' };
    case '==': {
      const k = refKey(o['entity']);
      return k === undefined ? { op: 'any' } : { op: 'eq', uids: [k] };
    }
    case 'in': {
      if (Array.isArray(o['entities'])) {
        const keys = o['entities'].map(refKey);
        return keys.some((k) => k === undefined) ? { op: 'any' } : { op: 'in', uids: keys as string[] };
      }
      const k = refKey(o['entity']);
      return k === undefined ? { op: 'any' } : { op: 'in', uids: [k] };
    }
    case 'is': {
      const type = o['entity_type'];
      if (typeof type !== 'string') return { op: 'any' };
      const inner = o['in'] as Record<string, unknown> | undefined;
      if (inner === undefined) return { op: 'is', type };
      const k = refKey(inner['entity']);
      return k === undefined ? { op: 'any' } : { op: 'is', type, inUid: k };
    }
    default:
      return { op: 'any' };
  }
}

export function analysePolicy(id: string, json: Record<string, unknown>): PolicyFacts {
  const reads: PolicyFacts['reads'] = { principal: new Set(), resource: new Set(), context: new Set() };
  let usesPrincipal = false;
  let usesResource = false;
  const markAll = (v: 'principal' | 'resource' | 'context'): void => {
    reads[v] = 'all';
  };
  const add = (v: string, attr: string): void => {
    if (v !== 'principal' && v !== 'resource' && v !== 'context') return; // action attrs are constant
    const set = reads[v];
    if (set !== 'all') set.add(attr);
  };
  const walk = (e: unknown): void => {
    if (e === null || typeof e !== 'object') return;
    if (Array.isArray(e)) {
      for (const x of e) walk(x);
      return;
    }
    for (const [key, val] of Object.entries(e as Record<string, unknown>)) {
      if (key === 'Value') {
        if (hasRequestEntityLiteral(val)) {
          usesPrincipal = true;
          usesResource = true;
        }
        continue;
      }
      if (key === 'Var') {
        // A variable used as a whole value: principal/resource mean their uid and ancestors; the
        // context record as a value means everything in it. (The action's uid is always in the key.)
        if (val === 'context') markAll('context');
        else if (val === 'principal') usesPrincipal = true;
        else if (val === 'resource') usesResource = true;
        continue;
      }
      if ((key === '.' || key === 'has') && val !== null && typeof val === 'object') {
        const { left, attr } = val as { left?: unknown; attr?: unknown };
        const first = Array.isArray(attr) ? attr[0] : attr;
        const v = (left as { Var?: unknown } | undefined)?.Var;
        if (typeof v === 'string' && typeof first === 'string') {
          add(v, first);
          continue;
        }
        if (isRecordChain(left)) {
          walk(left);
          continue;
        }
        // Attribute of something else (an entity literal, a conditional…): it may be a request entity.
        markAll('principal');
        markAll('resource');
        markAll('context');
        usesPrincipal = true;
        usesResource = true;
        walk(left);
        continue;
      }
      walk(val);
    }
  };
  for (const cond of (json['conditions'] as unknown[] | undefined) ?? []) walk((cond as { body?: unknown }).body);
  return {
    id,
    effect: json['effect'] === 'forbid' ? 'forbid' : 'permit',
    principal: constraint(json['principal']),
    action: constraint(json['action']),
    resource: constraint(json['resource']),
    reads,
    usesPrincipal,
    usesResource,
  };
}

/** `context.a.b…`, `principal.a.b…`: the top-level attribute is recorded by the innermost access. */
function isRecordChain(e: unknown): boolean {
  let cur = e as Record<string, unknown> | undefined;
  while (cur && typeof cur === 'object') {
    if (typeof cur['Var'] === 'string') return true;
    const dot = cur['.'] as { left?: unknown } | undefined;
    if (!dot) return false;
    cur = dot.left as Record<string, unknown> | undefined;
  }
  return false;
}

/** Does an entity (uid key, type, ancestors) satisfy a principal/resource constraint? */
export function matches(c: Constraint, key: string, type: string, ancestors: ReadonlySet<string>): boolean {
  switch (c.op) {
    case 'any':
      return true;
    case 'eq':
      return c.uids[0] === key;
    case 'in':
      return c.uids.some((u) => u === key || ancestors.has(u));
    case 'is':
      return c.type === type && (c.inUid === undefined || c.inUid === key || ancestors.has(c.inUid));
  }
}
