import { ErrorCodes, ThvError } from '../errors.js';
import type { TransportType } from '../config/run-config.js';
import { PUBLISHER_PROVIDED, STACKLOK_NAMESPACE, type EnvVarDecl, type RegistryEntry, type ServerJson } from './types.js';

/**
 * Turns registry documents (spec §6.1) into `RegistryEntry` values. Malformed entries are reported by name
 * so a user can fix their file; a legacy ToolHive `registry.json` is refused with the same hint ToolHive
 * gives.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function invalid(where: string, message: string): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, `invalid registry data (${where}): ${message}`);
}

const TRANSPORTS: readonly TransportType[] = ['stdio', 'sse', 'streamable-http'];

function transportOf(v: unknown, where: string): TransportType {
  const t = str(v) ?? 'stdio';
  if (!(TRANSPORTS as readonly string[]).includes(t)) throw invalid(where, `unsupported transport ${JSON.stringify(t)}`);
  return t as TransportType;
}

/** `http://localhost:8080/mcp` → 8080 (the package transport URL carries the target port). */
function portOf(url: unknown): number | undefined {
  const s = str(url);
  if (s === undefined) return undefined;
  try {
    const port = Number(new URL(s.replace(/\{[^}]*\}/g, 'x')).port);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

function envVarDecls(v: unknown): EnvVarDecl[] {
  if (!Array.isArray(v)) return [];
  const out: EnvVarDecl[] = [];
  for (const e of v) {
    if (!isObj(e)) continue;
    const name = str(e['name']);
    if (name === undefined) continue;
    const def = e['default'] ?? e['value'];
    out.push({
      name,
      description: str(e['description']),
      required: e['isRequired'] === true || e['required'] === true,
      secret: e['isSecret'] === true || e['secret'] === true,
      default: typeof def === 'string' && def !== '' ? def : undefined,
    });
  }
  return out;
}

/** Declarations of every package (oci, npm, pypi), the first package's winning for a name. */
function mergedEnvVars(pkgs: Array<Obj | undefined>): EnvVarDecl[] {
  const out = new Map<string, EnvVarDecl>();
  for (const p of pkgs) {
    if (p === undefined) continue;
    for (const d of envVarDecls(p['environmentVariables'])) if (!out.has(d.name)) out.set(d.name, d);
  }
  return [...out.values()];
}

/** `packageArguments` → argv (positional values, `--name value` for named ones). */
function packageArgs(v: unknown): string[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const out: string[] = [];
  for (const a of v) {
    if (!isObj(a)) continue;
    const value = str(a['value']) ?? str(a['default']);
    if (a['type'] === 'named') {
      const name = str(a['name']);
      if (name !== undefined) out.push(name);
      if (value !== undefined) out.push(value);
    } else if (value !== undefined) {
      out.push(value);
    }
  }
  return out.length > 0 ? out : undefined;
}

/** ToolHive's extension block for one server, keyed by image reference or remote URL. */
function stacklokExtensions(meta: unknown, keys: Array<string | undefined>): Obj {
  if (!isObj(meta)) return {};
  const provided = meta[PUBLISHER_PROVIDED];
  if (!isObj(provided)) return {};
  const ns = provided[STACKLOK_NAMESPACE];
  if (!isObj(ns)) return {};
  for (const key of keys) if (key !== undefined && isObj(ns[key])) return ns[key] as Obj;
  const values = Object.values(ns).filter(isObj);
  return values.length === 1 ? values[0]! : {};
}

function withVersion(identifier: string, version: string | undefined): string {
  return version === undefined || version === 'latest' ? identifier : `${identifier}@${version}`;
}

/** One `server.json` object → an entry. */
export function parseServer(server: unknown, index: number): RegistryEntry {
  if (!isObj(server)) throw invalid(`server #${index + 1}`, 'not an object');
  const s = server as ServerJson;
  const name = str(s.name);
  if (name === undefined) throw invalid(`server #${index + 1}`, 'missing name');
  const packages = Array.isArray(s.packages) ? s.packages.filter(isObj) : [];
  const remotes = Array.isArray(s.remotes) ? s.remotes.filter(isObj) : [];
  const oci = packages.find((p) => p['registryType'] === 'oci' || p['registry_type'] === 'oci');
  const npm = packages.find((p) => p['registryType'] === 'npm');
  const pypi = packages.find((p) => p['registryType'] === 'pypi');
  const pkg = oci ?? npm ?? pypi;
  const remote = remotes[0];
  if (pkg === undefined && remote === undefined) throw invalid(name, 'has neither a supported package (oci, npm, pypi) nor a remote');

  const image = str(oci?.['identifier']);
  const remoteUrl = pkg === undefined ? str(remote?.['url']) : undefined;
  const ext = stacklokExtensions(s._meta, [image, remoteUrl, str(npm?.['identifier']), str(pypi?.['identifier'])]);
  const repo = isObj(s.repository) ? str(s.repository['url']) : undefined;
  const base = {
    name,
    title: str(s.title),
    description: str(s.description) ?? '',
    version: str(s.version),
    status: str(ext['status']),
    tier: str(ext['tier']),
    tags: strings(ext['tags']),
    tools: strings(ext['tools']),
    repositoryUrl: repo,
    proxyPort: typeof ext['proxy_port'] === 'number' ? ext['proxy_port'] : undefined,
    stateless: ext['stateless'] === true ? true : undefined,
  };

  if (pkg !== undefined) {
    const transport = isObj(pkg['transport']) ? pkg['transport'] : {};
    const extArgs = strings(ext['args']);
    const pkgVersion = (p: Obj | undefined): string | undefined => str(p?.['version']);
    return {
      ...base,
      kind: 'image',
      image,
      npmPackage: npm !== undefined ? withVersion(str(npm['identifier']) ?? '', pkgVersion(npm)) || undefined : undefined,
      pypiPackage: pypi !== undefined ? withVersion(str(pypi['identifier']) ?? '', pkgVersion(pypi)) || undefined : undefined,
      transport: transportOf(transport['type'], name),
      targetPort: typeof ext['target_port'] === 'number' ? ext['target_port'] : portOf(transport['url']),
      permissions: isObj(ext['permissions']) ? ext['permissions'] : undefined,
      envVars: mergedEnvVars([pkg, oci, npm, pypi]),
      args: extArgs.length > 0 ? extArgs : packageArgs(pkg['packageArguments']),
    };
  }
  const type = transportOf(remote!['type'] ?? 'streamable-http', name);
  if (type === 'stdio') throw invalid(name, 'a remote cannot use the stdio transport');
  return {
    ...base,
    kind: 'remote',
    transport: type,
    url: str(remote!['url']) ?? (() => { throw invalid(name, 'remote without url'); })(),
    headers: envVarDecls(remote!['headers']),
    envVars: envVarDecls(ext['env_vars']),
    oauthConfig: isObj(ext['oauth_config']) ? ext['oauth_config'] : undefined,
  };
}

/** A whole registry document in upstream format. */
export function parseRegistryDocument(doc: unknown, where: string): RegistryEntry[] {
  if (!isObj(doc)) throw invalid(where, 'the document is not a JSON object');
  if (!isObj(doc['data']) && (isObj(doc['servers']) || isObj(doc['remote_servers']))) {
    throw new ThvError(ErrorCodes.InvalidConfig, `${where} is in the legacy ToolHive registry format, which is no longer supported`, {
      hint: 'convert it to the upstream MCP registry format (ToolHive: thv registry convert); see docs/registry.md',
    });
  }
  const data = doc['data'];
  if (!isObj(data) || !Array.isArray(data['servers'])) {
    throw invalid(where, 'expected the upstream registry format: {"version", "meta", "data": {"servers": [...]}}');
  }
  return data['servers'].map((s, i) => parseServer(s, i));
}
