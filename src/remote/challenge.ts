/**
 * Parses the `WWW-Authenticate` header of a remote's 401 (spec §7.2 step 2b): the scheme and the
 * parameters `realm`, `resource_metadata`, `scope`, `error`, `error_description` (quoted or token values).
 */
export interface AuthChallenge {
  scheme: string;
  params: Record<string, string>;
}

/** The first challenge of the header (lower-cased scheme and parameter names), or undefined. */
export function parseChallenge(header: string | null | undefined): AuthChallenge | undefined {
  if (!header) return undefined;
  const m = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+(.*))?$/s.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  let rest = m[2] ?? '';
  const param = /^\s*,?\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*/s;
  for (;;) {
    const p = param.exec(rest);
    if (!p) break;
    const key = p[1]!.toLowerCase();
    const value = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
    // The first occurrence wins; a second challenge (after another scheme name) is not read.
    if (!(key in params)) params[key] = value;
    rest = rest.slice(p[0].length);
    if (/^[A-Za-z][A-Za-z0-9-]*\s+[A-Za-z0-9_.-]+=/.test(rest)) break;
  }
  return { scheme: m[1]!.toLowerCase(), params };
}
