/**
 * Does the remote want authentication? (spec §7.2 step 2.) A GET, then an `initialize` POST; a 401 with a
 * `Bearer`/`OAuth` challenge says yes. Otherwise the RFC 9728 well-known documents are probed. Budget 10 s.
 */
import { ErrorCodes, ThvError } from '../errors.js';
import { parseChallenge } from './challenge.js';
import { describeFetchError, fetchSameHost, readJsonCapped, type FetchLike } from './http.js';

export type Detection =
  | { kind: 'none' }
  | { kind: 'oauth'; realm?: string; resourceMetadata?: string; scope?: string; error?: string };

export const DETECTION_TIMEOUT_MS = 10_000;

export async function detectAuth(remoteUrl: string, fetchImpl: FetchLike = fetch, timeoutMs = DETECTION_TIMEOUT_MS): Promise<Detection> {
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  const probes: RequestInit[] = [
    { method: 'GET', headers: { accept: 'application/json, text/event-stream' } },
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    },
  ];
  let reached = false;
  let lastError = '';
  for (const init of probes) {
    let res: Response;
    try {
      res = await fetchSameHost(remoteUrl, init, left(), fetchImpl);
    } catch (err) {
      if (err instanceof ThvError) throw err;
      lastError = describeFetchError(err);
      continue;
    }
    reached = true;
    await res.body?.cancel().catch(() => {});
    if (res.status !== 401) continue;
    const challenge = parseChallenge(res.headers.get('www-authenticate'));
    if (!challenge) continue;
    if (challenge.scheme === 'basic' || challenge.scheme === 'digest') {
      throw new ThvError(ErrorCodes.RemoteAuthFailed, `the remote asks for ${challenge.scheme} authentication, which is not supported`);
    }
    if (challenge.scheme !== 'bearer' && challenge.scheme !== 'oauth') continue;
    const p = challenge.params;
    // A challenge without resource_metadata still has RFC 9728 metadata at the well-known places (MCP
    // authorization spec): probing them finds the authorization server (ToolHive stops here instead).
    const resourceMetadata = p.resource_metadata ?? (p.realm ? undefined : await probeResourceMetadata(remoteUrl, left, fetchImpl));
    return { kind: 'oauth', realm: p.realm, resourceMetadata, scope: p.scope, error: p.error };
  }
  if (!reached) {
    throw new ThvError(ErrorCodes.RemoteUnreachable, `the remote MCP server ${remoteUrl} cannot be reached: ${lastError}`, {
      hint: 'check the URL and that the server is up',
    });
  }
  // No challenge: a protected-resource metadata document still says OAuth.
  const resourceMetadata = await probeResourceMetadata(remoteUrl, left, fetchImpl);
  return resourceMetadata ? { kind: 'oauth', resourceMetadata } : { kind: 'none' };
}

/** The first RFC 9728 well-known URL (path-based, then root) that answers 200 with a JSON object. */
async function probeResourceMetadata(remoteUrl: string, left: () => number, fetchImpl: FetchLike): Promise<string | undefined> {
  const u = new URL(remoteUrl);
  const path = u.pathname.replace(/\/+$/, '');
  const candidates = [
    ...(path ? [`${u.origin}/.well-known/oauth-protected-resource${path}`] : []),
    `${u.origin}/.well-known/oauth-protected-resource`,
  ];
  for (const url of candidates) {
    try {
      const res = await fetchSameHost(url, { headers: { accept: 'application/json' } }, left(), fetchImpl);
      if (res.status === 200) {
        const doc = await readJsonCapped(res).catch(() => undefined);
        if (doc && typeof doc === 'object') return url;
      } else {
        await res.body?.cancel().catch(() => {});
      }
    } catch {
      // not there
    }
  }
  return undefined;
}
