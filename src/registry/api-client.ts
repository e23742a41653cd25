import { ErrorCodes, ThvError } from '../errors.js';
import { VERSION } from '../version.js';
import { parseServer } from './parse.js';
import type { RegistryEntry } from './types.js';

/**
 * Client of the MCP Registry API v0.1 (spec §6.4), as served by the official registry and by
 * thv-registry-api under `/registry/{name}`: the base URL is everything before `/v0.1`.
 */

const PAGE_LIMIT = 100;
const MAX_SERVERS = 10_000;
const TIMEOUT_MS = 10_000;
const ERROR_BODY_LIMIT = 4096;

export function apiBase(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v0\.1(\/servers)?$/, '');
}

async function getJson(url: string, timeoutMs = TIMEOUT_MS): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: 'application/json', 'user-agent': `thv/${VERSION}` },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'follow',
    });
  } catch (err) {
    throw new ThvError(ErrorCodes.Internal, `cannot reach the registry at ${url}: ${(err as Error).message}`, { cause: err });
  }
  const text = await res.text();
  if (res.status === 401 || res.status === 403) {
    throw new ThvError(ErrorCodes.Internal, `registry authentication failed (HTTP ${res.status}) at ${url}`, {
      hint: 'registry login (thv config set-registry … --issuer … --client-id …) is not available in this version of thv',
    });
  }
  if (res.status === 404) return { status: 404, body: undefined };
  if (res.status < 200 || res.status > 299) {
    throw new ThvError(ErrorCodes.Internal, `registry answered HTTP ${res.status} at ${url}: ${text.slice(0, ERROR_BODY_LIMIT)}`);
  }
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new ThvError(ErrorCodes.Internal, `registry at ${url} did not answer JSON`);
  }
}

function serversOf(body: unknown, url: string): { servers: unknown[]; next?: string } {
  const b = body as { servers?: unknown; metadata?: { nextCursor?: unknown } } | undefined;
  if (!Array.isArray(b?.servers)) throw new ThvError(ErrorCodes.Internal, `registry at ${url} answered without a "servers" list`);
  const next = b.metadata?.nextCursor;
  return { servers: b.servers.map((s) => (s as { server?: unknown })?.server ?? s), next: typeof next === 'string' && next !== '' ? next : undefined };
}

export class RegistryApiClient {
  constructor(readonly baseUrl: string) {}

  private url(path: string, query: Record<string, string> = {}): string {
    const u = new URL(`${apiBase(this.baseUrl)}/v0.1${path}`);
    for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
    return u.toString();
  }

  /** Every server (latest versions), following `metadata.nextCursor`. */
  async list(query: Record<string, string> = {}): Promise<RegistryEntry[]> {
    const out: RegistryEntry[] = [];
    let cursor: string | undefined;
    do {
      const url = this.url('/servers', { ...query, ...(cursor ? { cursor } : {}), limit: String(PAGE_LIMIT), version: 'latest' });
      const { body } = await getJson(url);
      const page = serversOf(body, url);
      page.servers.forEach((s, i) => out.push(parseServer(s, out.length + i)));
      cursor = page.next;
    } while (cursor !== undefined && out.length < MAX_SERVERS);
    return out;
  }

  search(q: string): Promise<RegistryEntry[]> {
    return this.list({ search: q });
  }

  /** One server by full name, or undefined. */
  async get(name: string): Promise<RegistryEntry | undefined> {
    const url = this.url(`/servers/${encodeURIComponent(name)}/versions/latest`);
    const { status, body } = await getJson(url);
    if (status === 404 || body === undefined) return undefined;
    return parseServer((body as { server?: unknown }).server ?? body, 0);
  }

  /** `set-registry` probe: does this URL speak the API? (2xx with `servers` + `metadata`, or 401/403.) */
  static async probe(url: string): Promise<boolean> {
    try {
      const res = await fetch(`${apiBase(url)}/v0.1/servers?limit=1&version=latest`, {
        headers: { accept: 'application/json', 'user-agent': `thv/${VERSION}` },
        signal: AbortSignal.timeout(5000),
      });
      if (res.status === 401 || res.status === 403) return true;
      if (res.status < 200 || res.status > 299) return false;
      const body = (await res.json()) as { servers?: unknown; metadata?: unknown };
      return Array.isArray(body.servers) && typeof body.metadata === 'object' && body.metadata !== null;
    } catch {
      return false;
    }
  }
}

/** Fetches a static registry JSON document (5 s, as ToolHive's validation fetch). */
export async function fetchRegistryDocument(url: string): Promise<unknown> {
  const { status, body } = await getJson(url, 5000);
  if (status === 404) throw new ThvError(ErrorCodes.NotFound, `registry file not found at ${url} (HTTP 404)`);
  return body;
}
