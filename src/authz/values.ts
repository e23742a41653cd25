/**
 * JSON values (token claims, tool arguments) → Cedar JSON values, exactly as ToolHive converts them
 * (`pkg/authz/authorizers/cedar/entity.go` convertToCedarValueAtDepth), so that existing policies keep
 * their meaning:
 *
 * - string, boolean → String, Bool;
 * - every JSON number → `decimal`, truncated to 4 fractional digits (`5` → `decimal("5.0")`,
 *   `2.71828` → `decimal("2.7182")`: cedar-go computes `int64(f*10000)` on a float64); out of the i64
 *   range or not finite → dropped. (`longIntegers` is for ToolHive's local-user claims, which are Go
 *   integers and so Cedar `Long`.)
 * - array → Set of the converted elements (unsupported elements dropped);
 * - object → Record, recursively; null and anything else → dropped.
 * - nesting deeper than 10 levels is dropped (the enclosing record stays).
 *
 * Our one addition: a record with a key Cedar's JSON format reserves (`__entity`, `__extn`, `__expr`)
 * cannot be expressed without being read as an entity or extension value, so it is dropped.
 */

/** A value in Cedar's JSON format. */
export type CedarJson = string | boolean | number | CedarJson[] | { [key: string]: CedarJson };

export const MAX_DEPTH = 10;

const TWO_63 = 9223372036854775808;

export interface ConvertOptions {
  /** Integers become Cedar Long instead of decimal (ToolHive's local-user exp/iat/nbf). */
  longIntegers?: boolean;
}

/** Returns undefined when ToolHive would drop the value. */
export function toCedarValue(value: unknown, options: ConvertOptions = {}, depth = 0): CedarJson | undefined {
  if (depth > MAX_DEPTH) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (options.longIntegers === true && Number.isSafeInteger(value)) return value;
      return toDecimal(value);
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        const out: CedarJson[] = [];
        for (const item of value) {
          const v = toCedarValue(item, options, depth + 1);
          if (v !== undefined) out.push(v);
        }
        return out;
      }
      const rec: Record<string, CedarJson> = {};
      for (const key of Object.keys(value)) {
        if (key === '__entity' || key === '__extn' || key === '__expr') return undefined;
        const v = toCedarValue((value as Record<string, unknown>)[key], options, depth + 1);
        if (v !== undefined) rec[key] = v;
      }
      return rec;
    }
    default:
      return undefined;
  }
}

/** `decimal(...)` for a JSON number, or undefined when it does not fit (ToolHive drops it). */
export function toDecimal(f: number): CedarJson | undefined {
  if (!Number.isFinite(f)) return undefined;
  const scaled = Math.trunc(f * 10000);
  if (!(scaled >= -TWO_63 && scaled < TWO_63)) return undefined;
  return { __extn: { fn: 'decimal', arg: formatDecimal(BigInt(scaled)) } } as unknown as CedarJson;
}

/** Fixed-point i64 with 4 fractional digits → Cedar's decimal literal (`5.0`, `3.14`, `-0.2899`). */
export function formatDecimal(scaled: bigint): string {
  const negative = scaled < 0n;
  const abs = negative ? -scaled : scaled;
  const whole = abs / 10000n;
  let frac = (abs % 10000n).toString().padStart(4, '0');
  while (frac.length > 1 && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${negative ? '-' : ''}${whole}.${frac}`;
}
