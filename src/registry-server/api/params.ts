import { badRequest } from './errors.js';

/** Path parameter checks with the reference's messages (spec §3.1). */
export function decodeParam(raw: string, param: string): string {
  let v: string;
  try {
    v = decodeURIComponent(raw);
  } catch {
    throw badRequest(`invalid URL encoding in ${param}`);
  }
  if (v.trim() === '') throw badRequest(`${param} cannot be empty`);
  if (/[ \t\r\n]/.test(v)) throw badRequest(`${param} cannot contain whitespace`);
  if (/[\u0000-\u001f\u007f]/.test(v)) throw badRequest(`${param} cannot contain control characters`);
  return v;
}

const NS = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;
const NAME = /^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$/;

/** undefined when valid, else the reason. */
export function serverNameProblem(input: string): string | undefined {
  const name = input.trim();
  const parts = name.split('/');
  if (parts.length === 1) return "server name must be in format 'dns-namespace/name' (e.g., 'com.example.api/server')";
  if (parts.length > 2) return "server name must contain exactly one '/' separator";
  const [ns, n] = parts as [string, string];
  if (ns === '') return 'namespace part cannot be empty';
  if (n === '') return 'name part cannot be empty';
  if (name.length < 3 || name.length > 200) return 'server name must be between 3 and 200 characters';
  if (!NS.test(ns))
    return `namespace '${ns}' is invalid. Namespace must start and end with alphanumeric characters, and may contain dots and hyphens in the middle`;
  if (!NAME.test(n))
    return `name '${n}' is invalid. Name must start and end with alphanumeric characters, and may contain dots, underscores, and hyphens in the middle`;
  return undefined;
}

export function checkServerName(name: string): string {
  const problem = serverNameProblem(name);
  if (problem) throw badRequest(`invalid server name format: ${problem}`);
  return name.trim();
}

/** The raw (still percent-encoded) path of a request, without the query. */
export function rawPathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start < 0) return '/';
  const q = url.indexOf('?', start);
  const h = url.indexOf('#', start);
  const end = [q, h].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b), url.length);
  return url.slice(start, end);
}
