import type { CedarOptions } from './config.js';
import { toCedarValue, type CedarJson, type ConvertOptions } from './values.js';

/**
 * MCP request → Cedar request, as ToolHive builds it (`cedar/core.go` AuthorizeWithJWTClaims,
 * `entity.go` CreateEntitiesForRequest):
 *
 *   principal Client::"<sub>"   attrs claim_<k> (+ claimset_<k>), parents <group type>::"<group>"
 *   action    Action::"call_tool" | "get_prompt" | "read_resource"   attrs {operation}
 *   resource  Tool::"<name>" | Prompt::"<name>" | Resource::"<uri>"   parent MCP::"<server>"
 *   context   claim_* + claimset_* + arg_* (+ arg_<k>_present for objects, arrays, null)
 */

export type CedarAction = 'call_tool' | 'get_prompt' | 'read_resource';

/** Tool annotations as the server's tools/list reported them (booleans only; others are ignored). */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export const ANNOTATION_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export interface AuthzRequest {
  /** The caller's claims (token claims, or the local user's). */
  claims: Record<string, unknown>;
  /**
   * ToolHive's local user has Go-integer exp/iat/nbf (Cedar Long); token claims are float64 (decimal).
   * True for the local user.
   */
  localClaims?: boolean;
  action: CedarAction;
  /** Tool or prompt name, or resource URI. */
  resourceId: string;
  arguments?: Record<string, unknown>;
  annotations?: ToolAnnotations;
  serverName: string;
}

export interface Uid {
  type: string;
  id: string;
}

export interface CedarEntity {
  uid: Uid;
  attrs: Record<string, CedarJson>;
  parents: Uid[];
  tags: Record<string, CedarJson>;
}

/** The principal side, which depends only on the claims (memoised per claims object). */
export interface PrincipalPart {
  uid: Uid;
  attrs: Record<string, CedarJson>;
  parents: Uid[];
  /** `type\0id` of each parent, for scope matching and cache keys. */
  parentKeys: string[];
}

export interface BuiltRequest {
  principal: PrincipalPart;
  action: CedarAction;
  resource: Uid;
  resourceAttrs: Record<string, CedarJson>;
  resourceParents: Uid[];
  context: Record<string, CedarJson>;
  serverName: string;
}

/** An error while building the request (missing sub, …): the request is denied. */
export class AuthzRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthzRequestError';
  }
}

export function uidKey(type: string, id: string): string {
  return `${type}\u0000${id}`;
}

const RESOURCE_TYPE: Record<CedarAction, string> = { call_tool: 'Tool', get_prompt: 'Prompt', read_resource: 'Resource' };

/** Group types every group claim becomes a parent of: the configured type, and `Group` (issue 5). */
export function groupTypes(options: CedarOptions): string[] {
  return options.groupEntityType === 'Group' ? ['Group'] : [options.groupEntityType, 'Group'];
}

export function buildPrincipal(claims: Record<string, unknown>, options: CedarOptions, local: boolean): PrincipalPart {
  const sub = claims['sub'];
  if (typeof sub !== 'string' || sub === '') throw new AuthzRequestError('missing principal: the sub claim must be a non-empty string');
  const convert: ConvertOptions = { longIntegers: local };
  const attrs: Record<string, CedarJson> = {};
  const multi = options.multiValuedClaims;
  const sets: Record<string, CedarJson> = {};
  for (const key of Object.keys(claims)) {
    let value = claims[key];
    if (multi.length > 0 && multi.includes(key)) {
      // Multi-valued claims (core.go:848): a space-joined string plus a claimset_<k> Set of tokens.
      if (typeof value === 'string') {
        sets[`claimset_${key}`] = value.split(/\s+/).filter((t) => t !== '');
      } else if (Array.isArray(value)) {
        const tokens = value.filter((t): t is string => typeof t === 'string');
        sets[`claimset_${key}`] = tokens;
        value = tokens.join(' ');
      }
    }
    const v = toCedarValue(value, convert);
    if (v !== undefined) attrs[`claim_${key}`] = v;
  }
  Object.assign(attrs, sets);
  const groups = extractAllGroups(claims, options);
  const parents: Uid[] = [];
  const parentKeys: string[] = [];
  for (const type of groupTypes(options)) {
    for (const g of groups) {
      parents.push({ type, id: g });
      parentKeys.push(uidKey(type, g));
    }
  }
  return { uid: { type: 'Client', id: sub }, attrs, parents, parentKeys };
}

/**
 * Groups of the caller (core.go:1259-1361): the configured group claim, else the first present of
 * `groups`, `roles`, `cognito:groups` and (our addition, issue 5) a provider-prefixed claim such as
 * `https://example.com/groups`; then the role claim appended; duplicates removed, order kept.
 */
export function extractAllGroups(claims: Record<string, unknown>, options: CedarOptions): string[] {
  let groups = options.groupClaimName !== undefined ? extractGroups(claims, options.groupClaimName) : undefined;
  if (groups === undefined) {
    for (const name of ['groups', 'roles', 'cognito:groups']) {
      groups = extractGroups(claims, name);
      if (groups !== undefined) break;
    }
  }
  if (groups === undefined) {
    for (const key of Object.keys(claims)) {
      if (key.length > 7 && (key.endsWith('/groups') || key.endsWith(':groups'))) {
        groups = extractGroups(claims, key);
        if (groups !== undefined) break;
      }
    }
  }
  const all = [...(groups ?? [])];
  if (options.roleClaimName !== undefined) all.push(...(extractGroups(claims, options.roleClaimName) ?? []));
  return [...new Set(all)];
}

/** An array claim's string elements; undefined when absent or not an array. Dotted names walk objects. */
export function extractGroups(claims: Record<string, unknown>, name: string): string[] | undefined {
  let value: unknown;
  if (Object.prototype.hasOwnProperty.call(claims, name)) value = claims[name];
  else if (name.includes('.')) {
    let cur: unknown = claims;
    for (const seg of name.split('.')) {
      if (seg === '' || cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.prototype.hasOwnProperty.call(cur, seg)) {
        cur = undefined;
        break;
      }
      cur = (cur as Record<string, unknown>)[seg];
    }
    value = cur;
  }
  if (!Array.isArray(value)) return undefined;
  return value.filter((g): g is string => typeof g === 'string');
}

/** arg_<k> for strings, booleans and numbers; arg_<k>_present for objects, arrays and null. */
export function argumentAttrs(args: Record<string, unknown> | undefined): Record<string, CedarJson> {
  const out: Record<string, CedarJson> = {};
  if (args === undefined) return out;
  for (const key of Object.keys(args)) {
    const v = args[key];
    const t = typeof v;
    if (t === 'string' || t === 'boolean' || t === 'number') {
      const c = toCedarValue(v);
      if (c !== undefined) out[`arg_${key}`] = c;
    } else if (t === 'object') {
      out[`arg_${key}_present`] = true;
    }
  }
  return out;
}

export function buildRequest(req: AuthzRequest, principal: PrincipalPart): BuiltRequest {
  const args = req.action === 'read_resource' ? {} : argumentAttrs(req.arguments);
  const resourceAttrs: Record<string, CedarJson> = {};
  switch (req.action) {
    case 'call_tool':
      if (req.annotations !== undefined) {
        for (const hint of ANNOTATION_HINTS) {
          const h = req.annotations[hint];
          if (typeof h === 'boolean') resourceAttrs[hint] = h;
        }
      }
      Object.assign(resourceAttrs, args);
      resourceAttrs['name'] = req.resourceId;
      resourceAttrs['operation'] = 'call';
      resourceAttrs['feature'] = 'tool';
      break;
    case 'get_prompt':
      resourceAttrs['name'] = req.resourceId;
      resourceAttrs['operation'] = 'get';
      resourceAttrs['feature'] = 'prompt';
      Object.assign(resourceAttrs, args);
      break;
    case 'read_resource':
      resourceAttrs['name'] = req.resourceId;
      resourceAttrs['uri'] = req.resourceId;
      resourceAttrs['operation'] = 'read';
      resourceAttrs['feature'] = 'resource';
      break;
  }
  return {
    principal,
    action: req.action,
    resource: { type: RESOURCE_TYPE[req.action], id: req.resourceId },
    resourceAttrs,
    resourceParents: req.serverName !== '' ? [{ type: 'MCP', id: req.serverName }] : [],
    context: { ...principal.attrs, ...args },
    serverName: req.serverName,
  };
}
