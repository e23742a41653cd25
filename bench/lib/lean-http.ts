/**
 * The HTTP load generator of the bridge benchmark: keep-alive HTTP/1.1 connections over plain sockets,
 * one request in flight on each, with as little client work per response as the protocol allows
 * (status line, Content-Length or chunked framing). It is the HTTP counterpart of the lean stdio client
 * that drives the direct contender: on a two-core machine a general-purpose generator's own work per
 * response sits on the critical path of every round trip and would be counted against the proxy.
 */
import net from 'node:net';

export interface LeanLoadOptions {
  url: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Per-request timeout: the connection is dropped, counted, and opened again. */
  timeoutMs: number;
  /** The next request body and the id it carries. */
  next(): { id: number; body: string };
  /** Every complete response; `ms` is its latency. */
  onResponse(status: number, body: string, id: number, ms: number): void;
}

export interface LeanLoadResult {
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

interface Parsed {
  status: number;
  body: string;
  rest: string;
}

/** One response from the front of `buf` (latin1, so lengths are bytes), or undefined when incomplete. */
function parseResponse(buf: string): Parsed | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = buf.slice(0, headEnd);
  const status = Number(head.slice(9, 12));
  const start = headEnd + 4;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const end = start + Number(length[1]);
    return buf.length < end ? undefined : { status, body: buf.slice(start, end), rest: buf.slice(end) };
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    let body = '';
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buf.slice(at, lineEnd), 16);
      if (Number.isNaN(size)) throw new Error(`bad chunk size: ${buf.slice(at, lineEnd)}`);
      const dataEnd = lineEnd + 2 + size;
      if (buf.length < dataEnd + 2) return undefined;
      if (size === 0) return { status, body, rest: buf.slice(dataEnd + 2) };
      body += buf.slice(lineEnd + 2, dataEnd);
      at = dataEnd + 2;
    }
  }
  // No framing (204, 1xx): an empty body.
  return { status, body: '', rest: buf.slice(start) };
}

export function leanLoad(o: LeanLoadOptions): Promise<LeanLoadResult> {
  const u = new URL(o.url);
  const port = Number(u.port);
  const prefix =
    `POST ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n` +
    Object.entries(o.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
  const result: LeanLoadResult = { errors: 0, timeouts: 0, non2xx: 0, statusCodes: {} };
  const endAt = performance.now() + o.seconds * 1000;
  let open = 0;

  return new Promise((resolve) => {
    const finished = (): void => {
      if (--open === 0) resolve(result);
    };
    const connect = (): void => {
      open++;
      const socket = net.connect(port, u.hostname);
      socket.setNoDelay(true);
      socket.setEncoding('latin1');
      let buf = '';
      let inFlight: { id: number; sentAt: number } | undefined;
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const close = (reopen: boolean): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.destroy();
        if (reopen && performance.now() < endAt) connect();
        finished();
      };
      const send = (): void => {
        if (performance.now() >= endAt) return close(false);
        const { id, body } = o.next();
        inFlight = { id, sentAt: performance.now() };
        socket.write(`${prefix}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        clearTimeout(timer);
        timer = setTimeout(() => {
          result.timeouts++;
          close(true);
        }, o.timeoutMs);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: string) => {
        buf += chunk;
        for (;;) {
          let parsed: Parsed | undefined;
          try {
            parsed = parseResponse(buf);
          } catch {
            result.errors++;
            return close(true);
          }
          if (parsed === undefined || inFlight === undefined) return;
          buf = parsed.rest;
          const { id, sentAt } = inFlight;
          inFlight = undefined;
          result.statusCodes[parsed.status] = (result.statusCodes[parsed.status] ?? 0) + 1;
          if (parsed.status < 200 || parsed.status >= 300) result.non2xx++;
          o.onResponse(parsed.status, parsed.body, id, performance.now() - sentAt);
          send();
          if (done) return;
        }
      });
      socket.on('error', () => {
        result.errors++;
        close(true);
      });
      socket.on('close', () => {
        if (!done && inFlight !== undefined) result.errors++;
        close(inFlight !== undefined);
      });
    };
    for (let i = 0; i < o.connections; i++) connect();
  });
}
