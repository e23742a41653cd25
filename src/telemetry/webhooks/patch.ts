/**
 * RFC 6902 JSON Patch, limited the way ToolHive limits mutating webhooks (spec §3.6): operations
 * add/remove/replace/copy/move/test only, and every `path` / `from` must lie under `/mcp_request/`.
 * Applied to `{"mcp_request": <request>}` on a deep copy; any problem throws PatchError.
 */
export class PatchError extends Error {}

const ALLOWED = new Set(['add', 'remove', 'replace', 'copy', 'move', 'test']);
const SCOPE = '/mcp_request/';

type Json = unknown;

function tokens(pointer: string): string[] {
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: Json, path: string): { parent: Record<string, Json> | Json[]; key: string } {
  const t = tokens(path);
  const key = t.pop()!;
  let cur: Json = doc;
  for (const part of t) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, part, false)];
    else if (cur !== null && typeof cur === 'object' && Object.hasOwn(cur, part)) cur = (cur as Record<string, Json>)[part];
    else throw new PatchError(`path ${path} does not exist`);
  }
  if (cur === null || typeof cur !== 'object') throw new PatchError(`path ${path} does not exist`);
  return { parent: cur as Record<string, Json> | Json[], key };
}

function arrayIndex(arr: Json[], token: string, forAdd: boolean): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`invalid array index ${JSON.stringify(token)}`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) throw new PatchError(`array index ${i} out of range`);
  return i;
}

function get(doc: Json, path: string): Json {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) return parent[arrayIndex(parent, key, false)];
  if (!Object.hasOwn(parent, key)) throw new PatchError(`path ${path} does not exist`);
  return parent[key];
}

function add(doc: Json, path: string, value: Json): void {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true), 0, value);
  else parent[key] = value;
}

function remove(doc: Json, path: string): Json {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, false), 1)[0];
  if (!Object.hasOwn(parent, key)) throw new PatchError(`path ${path} does not exist`);
  const old = parent[key];
  delete parent[key];
  return old;
}

function deepEqual(a: Json, b: Json): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, Json> = {};
    for (const k of Object.keys(v).sort()) out[k] = canonical((v as Record<string, Json>)[k]);
    return out;
  }
  return v;
}

function inScope(path: unknown, field: string): string {
  if (typeof path !== 'string') throw new PatchError(`operation needs a string "${field}"`);
  if (!path.startsWith(SCOPE)) throw new PatchError(`"${field}" ${JSON.stringify(path)} is outside ${SCOPE}`);
  return path;
}

/** Validates the operations (all of them, before any is applied). */
export function checkPatch(patch: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(patch)) throw new PatchError('patch must be a list of operations');
  return patch.map((op) => {
    if (op === null || typeof op !== 'object' || Array.isArray(op)) throw new PatchError('each patch operation must be an object');
    const o = op as Record<string, unknown>;
    if (typeof o.op !== 'string' || !ALLOWED.has(o.op)) throw new PatchError(`unsupported patch operation ${JSON.stringify(o.op)}`);
    inScope(o.path, 'path');
    if (o.op === 'copy' || o.op === 'move') inScope(o.from, 'from');
    if ((o.op === 'add' || o.op === 'replace' || o.op === 'test') && !('value' in o)) throw new PatchError(`"${o.op}" needs a value`);
    return o;
  });
}

/** Returns the patched request (the input is not modified). */
export function applyRequestPatch(request: Json, patch: unknown): Json {
  const ops = checkPatch(patch);
  const doc = { mcp_request: structuredClone(request) };
  for (const o of ops) {
    const path = o.path as string;
    switch (o.op) {
      case 'add':
        add(doc, path, structuredClone(o.value));
        break;
      case 'remove':
        remove(doc, path);
        break;
      case 'replace':
        remove(doc, path);
        add(doc, path, structuredClone(o.value));
        break;
      case 'copy':
        add(doc, path, structuredClone(get(doc, o.from as string)));
        break;
      case 'move': {
        const from = o.from as string;
        if (path.startsWith(`${from}/`)) throw new PatchError('cannot move a value into itself');
        add(doc, path, remove(doc, from));
        break;
      }
      case 'test':
        if (!deepEqual(get(doc, path), o.value)) throw new PatchError(`test failed at ${path}`);
        break;
    }
  }
  return doc.mcp_request;
}
