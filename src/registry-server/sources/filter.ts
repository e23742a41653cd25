/**
 * Name and tag filters of a source (spec §6.3). Names: globs where `*` also crosses `/`; exclude wins;
 * a non-empty include list must match. Tags come from the publisher-provided `_meta` block.
 */
export interface FilterConfig {
  names?: { include?: string[]; exclude?: string[] };
  tags?: { include?: string[]; exclude?: string[] };
}

const PUBLISHER = 'io.modelcontextprotocol.registry/publisher-provided';

function globToRegExp(glob: string): RegExp {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) throw new Error('unterminated [');
      let body = glob.slice(i + 1, end);
      if (body.startsWith('^')) body = '\\^' + body.slice(1);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(re + '$');
}

/** The first pattern that does not compile, or undefined. */
export function validFilterPatterns(f: FilterConfig): string | undefined {
  for (const p of [...(f.names?.include ?? []), ...(f.names?.exclude ?? [])]) {
    try {
      globToRegExp(p);
    } catch {
      return p;
    }
  }
  return undefined;
}

export function tagsOf(server: Record<string, unknown>): string[] {
  const meta = server._meta as Record<string, unknown> | undefined;
  const pp = meta?.[PUBLISHER];
  const out: string[] = [];
  if (typeof pp !== 'object' || pp === null) return out;
  for (const ns of Object.values(pp as Record<string, unknown>)) {
    if (typeof ns !== 'object' || ns === null) continue;
    for (const entry of Object.values(ns as Record<string, unknown>)) {
      const tags = (entry as { tags?: unknown } | null)?.tags;
      if (Array.isArray(tags)) for (const t of tags) if (typeof t === 'string') out.push(t);
    }
  }
  return out;
}

export function makeFilter(f: FilterConfig | undefined): (server: Record<string, unknown>) => boolean {
  if (!f) return () => true;
  const inc = (f.names?.include ?? []).map(globToRegExp);
  const exc = (f.names?.exclude ?? []).map(globToRegExp);
  const tinc = f.tags?.include ?? [];
  const texc = f.tags?.exclude ?? [];
  return (server) => {
    const name = String(server.name ?? '');
    if (exc.some((r) => r.test(name))) return false;
    if (inc.length > 0 && !inc.some((r) => r.test(name))) return false;
    if (tinc.length === 0 && texc.length === 0) return true;
    const tags = tagsOf(server);
    if (texc.some((t) => tags.includes(t))) return false;
    if (tinc.length > 0 && !tinc.some((t) => tags.includes(t))) return false;
    return true;
  };
}
