import { posix } from 'node:path';

/**
 * Public paths (spec §4.2): whole-segment prefix matching after normalisation. Anything encoded that
 * could change the path's shape once decoded (`%2f`, `%2e`, `%5c`, `%25`), a backslash, or a path that
 * does not decode is never public, so `/docs/..%2f..%2fv1/sources` cannot borrow `/docs`.
 */
export const DEFAULT_PUBLIC_PATHS = ['/openapi.json', '/.well-known'];

function clean(p: string): string {
  const c = posix.normalize(p.startsWith('/') ? p : `/${p}`);
  return c.length > 1 && c.endsWith('/') ? c.slice(0, -1) : c;
}

export function makePublicPathMatcher(extra: string[]): (rawPath: string) => boolean {
  const list = [...DEFAULT_PUBLIC_PATHS, ...extra].map(clean);
  return (rawPath) => {
    if (/%(2f|2e|5c|25)/i.test(rawPath) || rawPath.includes('\\')) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      return false;
    }
    if (decoded.includes('\0')) return false;
    const p = clean(decoded);
    return list.some((pub) => pub === '/' || p === pub || p.startsWith(`${pub}/`));
  };
}
