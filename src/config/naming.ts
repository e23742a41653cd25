/**
 * What the positional argument of `thv run` is (spec §1.2) and which workload name it gets (spec §1.3,
 * ToolHive's `getworkloadDefaultName`, `PackageNameToImageName`, `deriveRemoteName`,
 * `SanitizeWorkloadName`/`ValidateWorkloadName`).
 */
import { isIP } from 'node:net';
import { ErrorCodes, ThvError } from '../errors.js';

export type ProtocolScheme = 'npx' | 'uvx' | 'go';

export type ServerArgKind =
  | { kind: 'remote'; url: string }
  | { kind: 'protocol'; scheme: ProtocolScheme; pkg: string }
  | { kind: 'local-path'; path: string }
  | { kind: 'image-or-registry'; ref: string };

const PROTOCOL_PREFIXES: ReadonlyArray<readonly [string, ProtocolScheme]> = [
  ['npx://', 'npx'],
  ['uvx://', 'uvx'],
  ['go://', 'go'],
];

/** ToolHive's `networking.IsURL`: an http or https URL with a host. */
export function isRemoteUrl(arg: string): boolean {
  let url: URL;
  try {
    url = new URL(arg);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/**
 * Classifies the positional argument, in ToolHive's order: http(s) URL → remote; `npx://`, `uvx://`,
 * `go://` → protocol scheme; then (our addition for the process runtime) a path starting with `./`, `../`
 * or `/` (or exactly `.`/`..`) → local path; anything else is a registry name or an image reference,
 * which only a registry lookup can tell apart.
 */
export function classifyServerArg(arg: string): ServerArgKind {
  if (isRemoteUrl(arg)) return { kind: 'remote', url: arg };
  for (const [prefix, scheme] of PROTOCOL_PREFIXES) {
    if (arg.startsWith(prefix)) return { kind: 'protocol', scheme, pkg: arg.slice(prefix.length) };
  }
  if (arg.startsWith('./') || arg.startsWith('../') || arg.startsWith('/') || arg === '.' || arg === '..') {
    return { kind: 'local-path', path: arg };
  }
  return { kind: 'image-or-registry', ref: arg };
}

/**
 * ToolHive's `PackageNameToImageName`: strip one leading `./` or `../`, replace `/`, `@` and `.` with `-`,
 * strip one leading `-`; empty → `toolhive-container`.
 * `@modelcontextprotocol/server-everything` → `modelcontextprotocol-server-everything`.
 */
export function packageNameToImageName(pkg: string): string {
  let name = pkg;
  if (name.startsWith('./')) name = name.slice(2);
  if (name.startsWith('../')) name = name.slice(3);
  name = name.replace(/[/@.]/g, '-');
  if (name.startsWith('-')) name = name.slice(1);
  if (name === '' || name === '-') name = 'toolhive-container';
  return name;
}

/**
 * ToolHive's `deriveRemoteName`: the second-to-last DNS label of the URL's host
 * (`api.github.com` → `github`, `github.com` → `github`), or the host itself when it has one label
 * (`localhost`).
 *
 * Deliberate difference: for an IP-address host ToolHive yields the second-to-last octet (`127.0.0.1` → `0`);
 * we use the whole address with `.` replaced by `-` (`127-0-0-1`; IPv6 `::1` → `ipv6-1`), which is a usable name.
 */
export function deriveRemoteName(remoteUrl: string): string {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    throw new ThvError(ErrorCodes.InvalidArgument, `invalid remote URL: ${remoteUrl}`);
  }
  let host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') {
    throw new ThvError(ErrorCodes.InvalidArgument, `could not extract hostname from URL: ${remoteUrl}`);
  }
  if (isIP(host) === 4) return host.replaceAll('.', '-');
  if (isIP(host) === 6) return `ipv6-${host.replace(/[:.]+/g, '-').replace(/^-+|-+$/g, '')}`;
  const labels = host.split('.');
  // A trailing dot (FQDN form) leaves an empty last label; ignore it.
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop();
  return labels.length >= 2 ? (labels[labels.length - 2] as string) : host;
}

/** Name for a registry server given by name: `.` and `/` become `-` (`io.github.stacklok/fetch` → `io-github-stacklok-fetch`). */
export function registryNameToWorkloadName(name: string): string {
  return name.replace(/[./]/g, '-');
}

/**
 * Name for a raw image reference (spec §1.3): drop the digest and the tag (text after the last `:` that
 * follows the last `/`), split on `/`: one part → `name`, two → `ns-name`, more → `<second-to-last>-<last>`
 * (the registry host is dropped); every character outside `[A-Za-z0-9-]` becomes `-`.
 * `ghcr.io/github/github-mcp-server:latest` → `github-github-mcp-server`.
 */
export function imageToWorkloadName(image: string): string {
  let ref = image;
  const at = ref.indexOf('@');
  if (at !== -1) ref = ref.slice(0, at);
  const lastSlash = ref.lastIndexOf('/');
  const lastColon = ref.lastIndexOf(':');
  if (lastColon > lastSlash) ref = ref.slice(0, lastColon);
  const parts = ref.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0] as string;
  else if (parts.length === 2) name = `${parts[0]}-${parts[1]}`;
  else name = `${parts[parts.length - 2]}-${parts[parts.length - 1]}`;
  return name.replace(/[^A-Za-z0-9-]/g, '-');
}

/** File names too generic to name a workload after; the directory name is used instead. */
const GENERIC_ENTRY_POINTS = new Set(['index', 'main', 'server', '__main__', 'app', 'cli']);

/**
 * Name for a local server path (process runtime; no ToolHive equivalent): the file name without its
 * extension (`./servers/weather.py` → `weather`), or the directory name for generic entry points
 * (`./weather/index.js` → `weather`) and for directories given with a trailing slash.
 */
export function localPathToWorkloadName(path: string): string {
  const segments = path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.' && s !== '..');
  let candidate = segments[segments.length - 1] ?? '';
  const dot = candidate.lastIndexOf('.');
  if (dot > 0) candidate = candidate.slice(0, dot);
  if (GENERIC_ENTRY_POINTS.has(candidate.toLowerCase()) && segments.length >= 2) {
    candidate = segments[segments.length - 2] as string;
  }
  return candidate.replace(/[^A-Za-z0-9-]/g, '-').replace(/^-+|-+$/g, '');
}

/**
 * The default workload name for `thv run <arg>` without `--name` (ToolHive's `getworkloadDefaultName`).
 * `registryName` is the registry entry's name when the argument resolved in the registry (its `.` and `/`
 * become `-`); without it a non-URL, non-scheme argument is named as an image.
 */
export function defaultWorkloadName(arg: string, options: { resolvedInRegistry?: boolean } = {}): string {
  const kind = classifyServerArg(arg);
  switch (kind.kind) {
    case 'protocol':
      return packageNameToImageName(kind.pkg);
    case 'remote':
      return deriveRemoteName(kind.url);
    case 'local-path':
      return localPathToWorkloadName(kind.path);
    case 'image-or-registry':
      if (options.resolvedInRegistry === true && !arg.includes('://') && !arg.includes(':')) {
        return registryNameToWorkloadName(arg);
      }
      return imageToWorkloadName(arg);
  }
}

// ---------------------------------------------------------------------------------------------------
// SanitizeWorkloadName / ValidateWorkloadName (pkg/workloads/types/validate.go)

export const MAX_WORKLOAD_NAME_LENGTH = 100;

const WORKLOAD_NAME_PATTERN = /^[a-zA-Z0-9._-]+$/;
const COMMAND_INJECTION_PATTERN = /[$&;|]|\$\(|`/;
const COMMAND_INJECTION_PATTERN_GLOBAL = /[$&;|]|\$\(|`/g;

type IssueType =
  | 'empty'
  | 'null_bytes'
  | 'path_normalization'
  | 'path_traversal'
  | 'absolute_path'
  | 'command_injection'
  | 'invalid_chars'
  | 'too_long'
  | 'dot';

interface NameIssue {
  type: IssueType;
  description: string;
}

/** Go's `filepath.Clean` on Unix. */
export function goCleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

function analyzeWorkloadName(name: string): NameIssue[] {
  if (name === '') return [{ type: 'empty', description: 'workload name cannot be empty' }];
  const issues: NameIssue[] = [];
  if (name.includes('\0')) issues.push({ type: 'null_bytes', description: 'workload name contains null bytes' });
  const clean = goCleanPath(name);
  if (clean !== name) {
    issues.push({ type: 'path_normalization', description: 'workload name requires path normalization' });
  }
  // filepath.Rel(".", clean) fails for absolute paths and starts with ".." for escaping ones.
  if (clean.startsWith('/') || clean.startsWith('..')) {
    issues.push({ type: 'path_traversal', description: 'workload name contains path traversal' });
  }
  if (clean.startsWith('/')) {
    issues.push({ type: 'absolute_path', description: 'workload name cannot be an absolute path' });
  }
  if (COMMAND_INJECTION_PATTERN.test(name)) {
    issues.push({ type: 'command_injection', description: 'workload name contains potentially dangerous characters' });
  }
  if (!WORKLOAD_NAME_PATTERN.test(name)) {
    issues.push({
      type: 'invalid_chars',
      description: 'workload name can only contain alphanumeric characters, dots, hyphens, and underscores',
    });
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_WORKLOAD_NAME_LENGTH) {
    issues.push({ type: 'too_long', description: `workload name too long (max ${MAX_WORKLOAD_NAME_LENGTH} characters)` });
  }
  // Our addition: "." passes ToolHive's checks but would name files ".json"/".log".
  if (name === '.') issues.push({ type: 'dot', description: 'workload name cannot be "."' });
  return issues;
}

function applyFix(input: string, type: IssueType): string {
  switch (type) {
    case 'null_bytes':
      return input.replaceAll('\0', '');
    case 'path_normalization':
      return goCleanPath(input);
    case 'path_traversal':
      return input.replaceAll('..', '--');
    case 'absolute_path':
      return input.replace(/^[/\\]+/, '');
    case 'command_injection':
      return input.replace(COMMAND_INJECTION_PATTERN_GLOBAL, '-');
    case 'invalid_chars': {
      let out = '';
      for (const ch of input) out += /[a-zA-Z0-9._-]/.test(ch) ? ch : '-';
      return out;
    }
    case 'too_long':
      return input.length > MAX_WORKLOAD_NAME_LENGTH ? input.slice(0, MAX_WORKLOAD_NAME_LENGTH) : input;
    case 'dot':
      return input === '.' ? '' : input;
    case 'empty':
      return input;
  }
}

/**
 * ToolHive's `SanitizeWorkloadName`: makes a name safe for file paths instead of rejecting it. Returns the
 * sanitised name and whether it changed. Empty input stays empty; a name that sanitises to nothing becomes
 * `workload`.
 */
export function sanitizeWorkloadName(name: string): { name: string; changed: boolean } {
  if (name === '') return { name: '', changed: false };
  let result = name;
  for (const issue of analyzeWorkloadName(name)) result = applyFix(result, issue.type);
  if (result === '' || result === '.') result = 'workload';
  return { name: result, changed: result !== name };
}

/** The first problem with a workload name, or undefined when it is valid. */
export function workloadNameProblem(name: string): string | undefined {
  return analyzeWorkloadName(name)[0]?.description;
}

/**
 * ToolHive's `ValidateWorkloadName`: allowed characters `[a-zA-Z0-9._-]`, no path traversal, absolute path,
 * NUL or shell metacharacters, at most 100 characters. Throws `ThvError(InvalidArgument)`.
 */
export function validateWorkloadName(name: string): void {
  const problem = workloadNameProblem(name);
  if (problem !== undefined) {
    throw new ThvError(ErrorCodes.InvalidArgument, `invalid workload name: ${problem}`);
  }
}
