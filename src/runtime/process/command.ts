import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ErrorCodes, ThvError } from '../../errors.js';
import type { ProcessSpec } from './stdio-process.js';

/**
 * What the process runtime runs for a positional argument: a package through its launcher
 * (npx://, uvx://, go://) or a local executable. Container images need a container runtime.
 */
export function resolveProcessCommand(image: string, args: readonly string[], cwd: string = process.cwd()): { command: string; args: string[] } {
  if (image.startsWith('npx://')) {
    const pkg = requirePackage(image, 'npx://');
    return { command: requireOnPath('npx', 'install Node.js and npm'), args: ['-y', pkg, ...args] };
  }
  if (image.startsWith('uvx://')) {
    const pkg = requirePackage(image, 'uvx://');
    return { command: requireOnPath('uvx', 'install uv (https://docs.astral.sh/uv/)'), args: [pkg, ...args] };
  }
  if (image.startsWith('go://')) {
    const pkg = requirePackage(image, 'go://');
    const go = requireOnPath('go', 'install the Go toolchain');
    // A local path runs as is; a module path runs at @latest unless a version is given.
    const target = pkg.startsWith('.') || isAbsolute(pkg) || pkg.includes('@') ? pkg : `${pkg}@latest`;
    return { command: go, args: ['run', target, ...args] };
  }
  if (image.startsWith('./') || image.startsWith('../') || isAbsolute(image)) {
    const path = resolve(cwd, image);
    let isFile = false;
    try {
      isFile = statSync(path).isFile();
    } catch {
      throw new ThvError(ErrorCodes.NotFound, `no such file: ${image}`, { hint: 'give the path to an executable MCP server' });
    }
    if (!isFile) throw new ThvError(ErrorCodes.InvalidArgument, `${image} is not a file`);
    try {
      accessSync(path, constants.X_OK);
    } catch {
      throw new ThvError(ErrorCodes.InvalidArgument, `${image} is not executable`, { hint: `chmod +x ${image}` });
    }
    return { command: path, args: [...args] };
  }
  throw new ThvError(
    ErrorCodes.InvalidArgument,
    `the process runtime cannot run "${image}": it runs npx://, uvx://, go:// packages and local executables (./path, /path)`,
    { hint: 'container images and registry servers need a container engine (--runtime docker)' },
  );
}

function requirePackage(image: string, scheme: string): string {
  const pkg = image.slice(scheme.length).trim();
  if (pkg === '') throw new ThvError(ErrorCodes.InvalidArgument, `${scheme} needs a package name, e.g. ${scheme}some-mcp-server`);
  if (/^-/.test(pkg) || /\s/.test(pkg)) throw new ThvError(ErrorCodes.InvalidArgument, `invalid package name "${pkg}"`);
  return pkg;
}

export function findOnPath(name: string, pathEnv: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function requireOnPath(name: string, advice: string): string {
  const found = findOnPath(name);
  if (!found) throw new ThvError(ErrorCodes.RuntimeUnavailable, `${name} is not installed or not on PATH`, { hint: advice });
  return found;
}

/** Our own variables (and the secrets password) never reach the server. */
const PRIVATE_ENV = /^(TOOLHIVE_|THV_)/;

export function serverEnvironment(base: NodeJS.ProcessEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!PRIVATE_ENV.test(k)) env[k] = v;
  return Object.assign(env, extra);
}

export function processSpec(image: string, args: readonly string[], env: Record<string, string>): ProcessSpec {
  const { command, args: argv } = resolveProcessCommand(image, args);
  return { command, args: argv, env: serverEnvironment(process.env, env) };
}
