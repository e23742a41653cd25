import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { AuthzConfigError, type DocPath } from './config.js';
import { uidKey, type CedarEntity, type Uid } from './request.js';
import type { CedarJson } from './values.js';

/**
 * `entities_json`: the static entities (group/role hierarchies, MCP servers, …). ToolHive reads them
 * with cedar-go, which accepts `uid` as `{type, id}` or `{"__entity": {…}}` and lets `attrs` / `parents`
 * be omitted; Rust Cedar requires both, so they are filled in here. String uids (`"Tool::weather"`) are
 * rejected, as cedar-go rejects them.
 */
export interface StaticEntities {
  list: CedarEntity[];
  keys: Set<string>;
  /** uid key → every ancestor key (transitive), for scope matching. */
  ancestors(key: string): ReadonlySet<string>;
}

export function parseStaticEntities(text: string, path: DocPath): StaticEntities {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const pos = /at position (\d+)/.exec(msg);
    throw new AuthzConfigError(`entities_json: invalid JSON: ${msg}`, { path, offset: pos ? Number(pos[1]) : undefined });
  }
  if (!Array.isArray(doc)) throw new AuthzConfigError('entities_json: must be a JSON array of entities', { path });
  const list: CedarEntity[] = [];
  const keys = new Set<string>();
  doc.forEach((raw, i) => {
    const where = `entities_json: entity ${i}`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new AuthzConfigError(`${where}: must be an object`, { path });
    const e = raw as Record<string, unknown>;
    const uid = toUid(e['uid'], `${where}: uid`, path);
    const parentsRaw = e['parents'] ?? [];
    if (!Array.isArray(parentsRaw)) throw new AuthzConfigError(`${where}: parents must be a list`, { path });
    const parents = parentsRaw.map((p, j) => toUid(p, `${where}: parent ${j}`, path));
    const attrs = (e['attrs'] ?? {}) as Record<string, CedarJson>;
    const tags = (e['tags'] ?? {}) as Record<string, CedarJson>;
    const key = uidKey(uid.type, uid.id);
    if (keys.has(key)) throw new AuthzConfigError(`${where}: duplicate entity ${uid.type}::${JSON.stringify(uid.id)}`, { path });
    keys.add(key);
    list.push({ uid, attrs, parents, tags });
  });
  const check = cedar.checkParseEntities({ entities: list as unknown as cedar.Entities });
  if (check.type === 'failure') {
    throw new AuthzConfigError(`entities_json: ${check.errors.map((e) => e.message).join('; ')}`, { path });
  }
  const parentsOf = new Map<string, string[]>();
  for (const e of list) parentsOf.set(uidKey(e.uid.type, e.uid.id), e.parents.map((p) => uidKey(p.type, p.id)));
  const memo = new Map<string, Set<string>>();
  const ancestors = (key: string): ReadonlySet<string> => {
    const known = memo.get(key);
    if (known) return known;
    const out = new Set<string>();
    const stack = [...(parentsOf.get(key) ?? [])];
    while (stack.length > 0) {
      const k = stack.pop()!;
      if (out.has(k)) continue;
      out.add(k);
      stack.push(...(parentsOf.get(k) ?? []));
    }
    memo.set(key, out);
    return out;
  };
  return { list, keys, ancestors };
}

function toUid(v: unknown, where: string, path: DocPath): Uid {
  if (typeof v === 'string') {
    throw new AuthzConfigError(`${where}: must be an object {"type": …, "id": …}, not the string ${JSON.stringify(v)}`, { path });
  }
  const inner = (v as { __entity?: unknown } | null)?.__entity ?? v;
  const o = inner as { type?: unknown; id?: unknown } | null;
  if (o === null || typeof o !== 'object' || typeof o.type !== 'string' || typeof o.id !== 'string') {
    throw new AuthzConfigError(`${where}: must be an object with string "type" and "id"`, { path });
  }
  return { type: o.type, id: o.id };
}
