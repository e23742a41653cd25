/**
 * "Is a newer than b" as the reference decides the latest version: lenient semver (optional `v`,
 * missing minor/patch) when both parse, plain string comparison otherwise.
 */
interface Sem {
  nums: [number, number, number];
  pre: string[];
}

function parse(v: string): Sem | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v.trim());
  if (!m) return undefined;
  return { nums: [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)], pre: m[4] ? m[4].split('.') : [] };
}

function cmpPre(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  if (a.length === 0) return 1;
  if (b.length === 0) return -1;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return Math.sign(d);
    } else if (nx !== ny) return nx ? -1 : 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (pa && pb) {
    for (let i = 0; i < 3; i++) {
      const d = pa.nums[i]! - pb.nums[i]!;
      if (d !== 0) return Math.sign(d);
    }
    return cmpPre(pa.pre, pb.pre);
  }
  return a === b ? 0 : a > b ? 1 : -1;
}

export function latestOf(versions: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const v of versions) if (best === undefined || compareVersions(v, best) > 0) best = v;
  return best;
}
