/**
 * The HTTP client for everything auth fetches from an identity provider (discovery, JWKS, introspection):
 * HTTPS only unless allowed, no private/loopback/link-local destinations after DNS resolution (every
 * redirect hop is checked again, and the check runs at connect time so DNS rebinding cannot slip past)
 * unless allowed, an optional CA bundle replacing the system roots, timeouts, and bounded bodies.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch, type Dispatcher } from 'undici';
import { isPrivateIp } from './private-ip.js';

export interface OutboundOptions {
  /** PEM file whose certificates replace the system roots. */
  caBundle?: string;
  allowPrivateIp?: boolean;
  allowHttp?: boolean;
  /** Whole-request timeout (connect, headers and body). */
  timeoutMs?: number;
  /** Which resolved addresses count as private (default isPrivateIp); tests substitute their own. */
  isPrivate?: (address: string) => boolean;
}

export class OutboundError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

const PRIVATE_IP_MESSAGE = 'the provided URL resolves to a private IP address, which is not allowed';
const MAX_REDIRECTS = 5;

export interface OutboundResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

export interface OutboundClient {
  request(url: string, init: { method?: string; headers?: Record<string, string>; body?: string; maxBytes: number }): Promise<OutboundResponse>;
  close(): Promise<void>;
}

/** Wraps dns.lookup: resolves as usual, then refuses if any resolved address is private. */
function guardedLookup(isPrivate: (address: string) => boolean): LookupFunction {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, options as { all: true }, (err, addresses: LookupAddress[] | string, family?: number) => {
      if (err) return callback(err);
      const list = Array.isArray(addresses) ? addresses : [{ address: addresses, family: family ?? 4 }];
      if (list.some((a) => isPrivate(a.address))) return callback(new OutboundError(PRIVATE_IP_MESSAGE));
      if (Array.isArray(addresses)) callback(null, addresses);
      else callback(null, addresses, family);
    });
  }) as unknown as LookupFunction;
}

export function createOutboundClient(options: OutboundOptions = {}): OutboundClient {
  const ca = options.caBundle !== undefined && options.caBundle !== '' ? readFileSync(options.caBundle, 'utf8') : undefined;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const isPrivate = options.isPrivate ?? isPrivateIp;
  const agent: Dispatcher = new Agent({
    connect: {
      timeout: timeoutMs,
      ...(ca !== undefined ? { ca } : {}),
      minVersion: 'TLSv1.2',
      ...(options.allowPrivateIp ? {} : { lookup: guardedLookup(isPrivate) }),
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  function check(url: URL): void {
    if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:')) {
      throw new OutboundError(`refusing ${url.protocol.replace(':', '')} URL ${url.origin}: HTTPS is required`);
    }
    // An IP literal is never looked up, so the connect-time guard would not see it.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowPrivateIp && isIP(host) !== 0 && isPrivate(host)) throw new OutboundError(PRIVATE_IP_MESSAGE);
  }

  return {
    async request(target, init) {
      let url = new URL(target);
      let method = init.method ?? 'GET';
      let body = init.body;
      const signal = AbortSignal.timeout(timeoutMs);
      for (let hop = 0; ; hop++) {
        check(url);
        let res;
        try {
          res = await fetch(url, { method, headers: init.headers, body, redirect: 'manual', dispatcher: agent, signal });
        } catch (err) {
          throw new OutboundError(`request to ${url.origin}${url.pathname} failed: ${describeCause(err)}`, { cause: err });
        }
        const location = res.headers.get('location');
        if (res.status >= 300 && res.status < 400 && location !== null) {
          await res.body?.cancel().catch(() => {});
          if (hop >= MAX_REDIRECTS) throw new OutboundError(`too many redirects from ${target}`);
          url = new URL(location, url);
          if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
          }
          continue;
        }
        return { status: res.status, headers: res.headers as unknown as Headers, body: await readBounded(res.body, init.maxBytes, url) };
      }
    },
    async close() {
      await agent.close();
    },
  };
}

async function readBounded(stream: ReadableStream<Uint8Array> | null, maxBytes: number, url: URL): Promise<Buffer> {
  if (stream === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await stream.cancel().catch(() => {});
      throw new OutboundError(`response from ${url.origin}${url.pathname} is larger than ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The innermost cause of a fetch failure, which is where undici puts the useful part. */
function describeCause(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof AggregateError && e.errors[0] instanceof Error) e = e.errors[0];
  return e instanceof Error ? e.message : String(e);
}
