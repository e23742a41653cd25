import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { ErrorCodes, ThvError } from '../errors.js';

/**
 * The `--authz-config` file (ToolHive `pkg/authz/authorizers/config.go` + `cedar/core.go`):
 *
 *   { "version": "1.0", "type": "cedarv1", "cedar": { "policies": [...], "entities_json": "[...]",
 *     "group_claim_name": ..., "role_claim_name": ..., "group_entity_type": ..., "multi_valued_claims": [...] } }
 *
 * and the same options under `{ "type": "policyv1", "policy": {...} }` (a shape users have; ToolHive
 * itself registers only cedarv1). JSON (`.json` or no extension) or YAML (`.yaml`, `.yml`).
 */

export type AuthzConfigType = 'cedarv1' | 'policyv1';

export interface CedarOptions {
  /** Each string is ONE Cedar policy; ids are `policy0..N` as in ToolHive. */
  policies: string[];
  /** A JSON string holding the static entity array. */
  entitiesJson: string;
  groupClaimName?: string;
  roleClaimName?: string;
  /** Entity type of the principal's group parents; default `THVGroup`. */
  groupEntityType: string;
  multiValuedClaims: string[];
}

export interface AuthzConfig {
  version: string;
  type: AuthzConfigType;
  options: CedarOptions;
}

export const DEFAULT_GROUP_ENTITY_TYPE = 'THVGroup';

/** Path inside the config document, e.g. ['cedar', 'policies', 2]. */
export type DocPath = (string | number)[];

/** Where a problem is: a path in the document plus, optionally, an offset inside that string value. */
export interface ConfigProblemAt {
  path: DocPath;
  /** Offset inside the string value (a policy, the entities JSON). */
  offset?: number;
}

/** A config that does not validate. `at` lets the file loader turn it into a file line. */
export class AuthzConfigError extends Error {
  readonly at: ConfigProblemAt | undefined;
  constructor(message: string, at?: ConfigProblemAt) {
    super(message);
    this.name = 'AuthzConfigError';
    this.at = at;
  }
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Validates the envelope and the options block (Cedar itself is checked by the authorizer). */
export function parseAuthzConfig(doc: unknown): AuthzConfig {
  if (!isRecord(doc)) throw new AuthzConfigError('the configuration must be an object', { path: [] });
  const version = doc['version'];
  if (typeof version !== 'string' || version === '') {
    throw new AuthzConfigError('version is required', { path: version === undefined ? [] : ['version'] });
  }
  const type = doc['type'];
  if (typeof type !== 'string' || type === '') throw new AuthzConfigError('type is required', { path: [] });
  if (type !== 'cedarv1' && type !== 'policyv1') {
    throw new AuthzConfigError(`unsupported authorizer type: ${JSON.stringify(type)} (supported: cedarv1, policyv1)`, { path: ['type'] });
  }
  const key = type === 'cedarv1' ? 'cedar' : 'policy';
  const block = doc[key];
  if (!isRecord(block)) {
    throw new AuthzConfigError(`${key} configuration is required for type ${type}`, { path: block === undefined ? [] : [key] });
  }
  const policies = block['policies'];
  if (!Array.isArray(policies) || policies.length === 0) {
    throw new AuthzConfigError('at least one policy is required', { path: policies === undefined ? [key] : [key, 'policies'] });
  }
  policies.forEach((p, i) => {
    if (typeof p !== 'string') throw new AuthzConfigError(`policy${i} must be a string`, { path: [key, 'policies', i] });
  });
  const entities = block['entities_json'];
  if (entities !== undefined && typeof entities !== 'string') {
    throw new AuthzConfigError('entities_json must be a string holding a JSON array', { path: [key, 'entities_json'] });
  }
  const optionalString = (name: string): string | undefined => {
    const v = block[name];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new AuthzConfigError(`${name} must be a string`, { path: [key, name] });
    return v;
  };
  const groupEntityType = optionalString('group_entity_type') ?? DEFAULT_GROUP_ENTITY_TYPE;
  if (!IDENT.test(groupEntityType)) {
    throw new AuthzConfigError(`group_entity_type must be a Cedar identifier, got ${JSON.stringify(groupEntityType)}`, {
      path: [key, 'group_entity_type'],
    });
  }
  const multi = block['multi_valued_claims'];
  if (multi !== undefined && multi !== null && (!Array.isArray(multi) || multi.some((m) => typeof m !== 'string'))) {
    throw new AuthzConfigError('multi_valued_claims must be a list of claim names', { path: [key, 'multi_valued_claims'] });
  }
  return {
    version,
    type,
    options: {
      policies: policies as string[],
      entitiesJson: entities === undefined || entities === '' ? '[]' : entities,
      groupClaimName: optionalString('group_claim_name'),
      roleClaimName: optionalString('role_claim_name'),
      groupEntityType,
      multiValuedClaims: (multi as string[] | undefined | null) ?? [],
    },
  };
}

/** The key that holds the options block for a config type. */
export function optionsKey(type: AuthzConfigType): string {
  return type === 'cedarv1' ? 'cedar' : 'policy';
}

export interface AuthzConfigFile {
  path: string;
  text: string;
  /** The parsed document (what `thv run` stores as `authz_config`). */
  doc: unknown;
  /** 1-based line and column of a problem, when it can be placed. */
  locate(at: ConfigProblemAt | undefined): { line: number; col: number } | undefined;
}

/**
 * Reads and parses the file, keeping enough to place later problems on a line. Syntax errors become
 * a ThvError (InvalidConfig) with `file:line:col`.
 */
export function readAuthzConfigFile(path: string): AuthzConfigFile {
  if (path.split(/[\\/]/).includes('..')) {
    throw invalid(`path must not contain "..": ${path}`);
  }
  const ext = extname(path).toLowerCase();
  const json = ext === '.json' || ext === '';
  if (!json && ext !== '.yaml' && ext !== '.yml') throw invalid(`${path} must be a .json, .yaml or .yml file`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw invalid(`cannot read ${path}: ${(err as Error).message}`);
  }
  const lines = new LineCounter();
  const yamlDoc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: false });
  let doc: unknown;
  if (json) {
    try {
      doc = JSON.parse(text);
    } catch (err) {
      const msg = (err as Error).message;
      const pos = /at position (\d+)/.exec(msg);
      const where = pos ? lines.linePos(Number(pos[1])) : yamlDoc.errors[0]?.linePos?.[0];
      throw invalid(`${path}${where ? `:${where.line}:${where.col}` : ''}: invalid JSON: ${msg}`);
    }
  } else {
    const first = yamlDoc.errors[0];
    if (first) {
      const where = first.linePos?.[0];
      throw invalid(`${path}${where ? `:${where.line}:${where.col}` : ''}: invalid YAML: ${first.message.split('\n')[0]}`);
    }
    doc = yamlDoc.toJS();
  }
  const locate = (at: ConfigProblemAt | undefined): { line: number; col: number } | undefined => {
    if (at === undefined || yamlDoc.errors.length > 0) return undefined;
    const node = yamlDoc.getIn(at.path, true) as YamlNode | undefined;
    const range = node?.range ?? (at.path.length === 0 ? yamlDoc.contents?.range : undefined);
    if (!range) return undefined;
    const start = lines.linePos(range[0]);
    if (at.offset === undefined || !isScalar(node) || typeof node.value !== 'string') return start;
    // Place the offset: line k of the value is line k of a block scalar (which starts on the next line),
    // or of a quoted value spread over several source lines; a one-line JSON string stays on its line.
    const value = node.value;
    const before = value.slice(0, at.offset);
    const lineInValue = before.split('\n').length;
    const colInValue = at.offset - (before.lastIndexOf('\n') + 1) + 1;
    const block = node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED';
    const source = text.slice(range[0], range[1]);
    if (block) return { line: start.line + lineInValue, col: colInValue };
    if (!source.includes('\n')) return { line: start.line, col: start.col + 1 + at.offset };
    return { line: start.line + lineInValue - 1, col: lineInValue === 1 ? start.col + colInValue : colInValue };
  };
  if (!isMap(yamlDoc.contents) && isRecord(doc)) {
    // Parsed fine as JSON but not as YAML (rare): problems are reported without a line.
    return { path, text, doc, locate: () => undefined };
  }
  return { path, text, doc, locate };
}

function invalid(message: string): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, `invalid authorization configuration: ${message}`);
}

/** Turns an AuthzConfigError into the ThvError `thv run` and `thv authz` print, with a file line. */
export function configErrorFor(file: AuthzConfigFile, err: AuthzConfigError): ThvError {
  const where = file.locate(err.at);
  return invalid(`${file.path}${where ? `:${where.line}:${where.col}` : ''}: ${err.message}`);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
