/**
 * Small HTTP helpers for talking to a remote and its authorization server: a bounded fetch, same-host
 * redirects only (never https → http), and a JSON reader capped at 1 MiB.
 */
import { ErrorCodes, ThvError } from '../errors.js';

export const MAX_JSON_BYTES = 1024 * 1024;

export type FetchLike = typeof fetch;

/** Fetch following at most 10 redirects to the same host, never from https to http. */
export async function fetchSameHost(url: string, init: RequestInit, timeoutMs: number, fetchImpl: FetchLike = fetch): Promise<Response> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  let current = new URL(url);
  for (let hop = 0; hop <= 10; hop++) {
    const res = await fetchImpl(current, { ...init, redirect: 'manual', signal });
    if (![301, 302, 303, 307, 308].includes(res.status)) return res;
    const location = res.headers.get('location');
    await res.body?.cancel().catch(() => {});
    if (!location) return res;
    const next = new URL(location, current);
    if (next.host !== current.host || (current.protocol === 'https:' && next.protocol !== 'https:')) {
      throw new ThvError(ErrorCodes.RemoteUnreachable, `the remote redirected to another host (${next.origin}); only same-host redirects are followed`);
    }
    current = next;
  }
  throw new ThvError(ErrorCodes.RemoteUnreachable, `too many redirects from ${url}`);
}

/** The JSON body of a response, refusing more than 1 MiB. */
export async function readJsonCapped(res: Response): Promise<unknown> {
  const reader = res.body?.getReader();
  if (!reader) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JSON_BYTES) {
      await reader.cancel();
      throw new Error('response larger than 1 MiB');
    }
    chunks.push(value);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** A loopback host: http is accepted for these (as ToolHive accepts "localhost" URLs). */
export function isLoopbackUrl(u: URL): boolean {
  const h = u.hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\./.test(h);
}

/** https, or http on a loopback host. */
export function isSecureOrLoopback(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackUrl(u));
  } catch {
    return false;
  }
}

/** The message of a fetch failure without its stack, e.g. "connect ECONNREFUSED 127.0.0.1:1". */
export function describeFetchError(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return 'timed out';
  const cause = e?.cause?.message ?? e?.cause?.code;
  return cause ? cause : (e?.message ?? String(err));
}
