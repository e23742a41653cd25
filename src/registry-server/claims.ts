/**
 * Claims: flat labels (`string | string[]`) on registries, sources and entry names, matched against
 * the caller's token claims (spec §4.5). Visibility is OR within a key's values; containment (for
 * writing new labels) needs every value. Unlabelled resources are denied under authz (default deny).
 */
export type ClaimValue = string | string[];
export type Claims = Record<string, ClaimValue>;

/** A message for the first value that is not a string or array of strings, else undefined. */
export function claimValueError(claims: Record<string, unknown>): string | undefined {
  for (const [k, v] of Object.entries(claims)) {
    if (typeof v === 'string') continue;
    if (Array.isArray(v)) {
      const i = v.findIndex((x) => typeof x !== 'string');
      if (i >= 0) return `claim "${k}": array element [${i}] must be a string, got ${goType(v[i])}`;
      continue;
    }
    return `claim "${k}": value must be a string or array of strings, got ${goType(v)}`;
  }
  return undefined;
}

function goType(v: unknown): string {
  if (v === null) return '<nil>';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  return typeof v;
}

function valuesOf(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
}

function matchKeys(caller: Record<string, unknown>, resource: Claims, all: boolean): boolean {
  for (const [k, rv] of Object.entries(resource)) {
    const want = valuesOf(rv);
    if (!want) return false;
    if (!(k in caller)) return false;
    if (want.length === 0) continue;
    const have = valuesOf(caller[k]);
    if (!have) return false;
    const ok = all ? want.every((w) => have.includes(w)) : want.some((w) => have.includes(w));
    if (!ok) return false;
  }
  return true;
}

export const claimsVisible = (caller: Record<string, unknown>, resource: Claims): boolean => matchKeys(caller, resource, false);
export const claimsContain = (caller: Record<string, unknown>, resource: Claims): boolean => matchKeys(caller, resource, true);

export function isEmptyClaims(c: Claims | null | undefined): boolean {
  return !c || Object.keys(c).length === 0;
}

/** Set equality per key, order-insensitive (publishing a new version must keep the name's labels). */
export function claimsEqual(a: Claims | null | undefined, b: Claims | null | undefined): boolean {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  if (ka.join('\0') !== kb.join('\0')) return false;
  for (const k of ka) {
    const va = [...new Set(valuesOf(a![k]) ?? [])].sort();
    const vb = [...new Set(valuesOf(b![k]) ?? [])].sort();
    if (va.join('\0') !== vb.join('\0')) return false;
  }
  return true;
}

/**
 * The caller as the claim gates see it. `claims` undefined = no authorization in force (anonymous
 * mode, or oauth without an authz block): every gate allows.
 */
export interface Caller {
  claims?: Record<string, unknown>;
  superAdmin: boolean;
}

export function gateVisible(caller: Caller, resource: Claims | null | undefined): boolean {
  if (!caller.claims || caller.superAdmin) return true;
  if (isEmptyClaims(resource)) return false;
  return claimsVisible(caller.claims, resource!);
}

export function gateContain(caller: Caller, resource: Claims | null | undefined): boolean {
  if (!caller.claims || caller.superAdmin) return true;
  if (isEmptyClaims(resource)) return false;
  return claimsContain(caller.claims, resource!);
}
