/**
 * Streamable-HTTP side of the benchmark: a real MCP handshake with `fetch`, then load from the lean
 * HTTP client (lean-http.ts; autocannon on request) with a unique JSON-RPC id per request and our own
 * accounting of which responses actually carry the echoed result.
 */
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { leanLoad } from './lean-http.js';
import { Latencies, type LatencySummary } from './stats.js';
import { withTimeout } from './proc.js';

export const PROTOCOL_VERSION = '2025-06-18';
export const ECHO_MESSAGE = 'hi';
export const ECHO_TEXT = `Echo: ${ECHO_MESSAGE}`;

// ---- autocannon (CommonJS, untyped): the slice of its API used here ----

type AcContext = Record<string, unknown>;

interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (req: AcRequest, context: AcContext) => AcRequest | null | undefined;
  onResponse?: (status: number, body: string, context: AcContext, headers: Record<string, unknown>) => void;
}

interface AcOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  timeout?: number;
  method?: string;
  headers?: Record<string, string>;
  requests?: AcRequest[];
}

interface AcResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  '2xx': number;
  requests: { average: number; total: number };
  latency: { average: number; p50: number; p99: number };
  statusCodeStats: Record<string, { count: number }>;
}

interface AcInstance extends EventEmitter {
  stop(): void;
}

type Autocannon = (opts: AcOptions, cb: (err: Error | null, result: AcResult) => void) => AcInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- MCP over streamable HTTP ----

export interface RpcEnvelope {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/** Parses a response body that is either one JSON value or an SSE stream of JSON `data:` events. */
export function parseBody(body: string): { kind: 'json' | 'sse'; messages: RpcEnvelope[] } {
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const value = JSON.parse(trimmed) as RpcEnvelope | RpcEnvelope[];
    return { kind: 'json', messages: Array.isArray(value) ? value : [value] };
  }
  const messages: RpcEnvelope[] = [];
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data.length > 0) messages.push(JSON.parse(data) as RpcEnvelope);
  }
  return { kind: 'sse', messages };
}

/** True when `msg` is the successful echo result. */
export function isEchoResult(msg: RpcEnvelope | undefined): boolean {
  const content = (msg?.result as { content?: Array<{ type?: string; text?: string }> } | undefined)?.content;
  return Array.isArray(content) && content.some((c) => c.type === 'text' && c.text === ECHO_TEXT);
}

export function echoCallBody(id: number): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"${ECHO_MESSAGE}"}}}`;
}

export interface Session {
  url: string;
  sessionId: string;
  /** Extra headers sent with every request of the session (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** How the peer answered a plain `tools/call`: a JSON body or an SSE stream. */
  answers: 'json' | 'sse';
  contentType: string;
}

const BASE_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': PROTOCOL_VERSION,
} as const;

async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * `initialize` (yielding `Mcp-Session-Id`), `notifications/initialized`, then one `tools/call echo`
 * to prove the path works end to end and to see whether the peer answers JSON or SSE.
 */
export async function openSession(url: string, timeoutMs: number, extraHeaders: Record<string, string> = {}): Promise<Session> {
  const init = await post(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'thv-bench', version: '0.0.0' },
      },
    }),
    { ...BASE_HEADERS, ...extraHeaders },
    timeoutMs,
  );
  if (init.status !== 200) throw new Error(`initialize: HTTP ${init.status}: ${init.text.slice(0, 300)}`);
  const initMsg = parseBody(init.text).messages.find((m) => m.id === 0);
  if (initMsg?.result === undefined) throw new Error(`initialize: no result in ${init.text.slice(0, 300)}`);
  const sessionId = init.headers.get('mcp-session-id');
  if (sessionId === null || sessionId === '') throw new Error('initialize: no Mcp-Session-Id header (stateless?)');

  const headers = { ...BASE_HEADERS, ...extraHeaders, 'Mcp-Session-Id': sessionId };
  const note = await post(url, '{"jsonrpc":"2.0","method":"notifications/initialized"}', headers, timeoutMs);
  if (note.status < 200 || note.status >= 300) {
    throw new Error(`notifications/initialized: HTTP ${note.status}: ${note.text.slice(0, 300)}`);
  }

  const probe = await post(url, echoCallBody(1), headers, timeoutMs);
  if (probe.status !== 200) throw new Error(`tools/call: HTTP ${probe.status}: ${probe.text.slice(0, 300)}`);
  const parsed = parseBody(probe.text);
  if (!isEchoResult(parsed.messages.find((m) => m.id === 1))) {
    throw new Error(`tools/call: unexpected answer ${probe.text.slice(0, 300)}`);
  }
  return { url, sessionId, headers: extraHeaders, answers: parsed.kind, contentType: probe.headers.get('content-type') ?? '' };
}

/** Best-effort `DELETE` of the session so the peer can tear its child down cleanly. */
export async function closeSession(session: Session, timeoutMs: number): Promise<void> {
  try {
    const res = await fetch(session.url, {
      method: 'DELETE',
      headers: { ...session.headers, 'Mcp-Session-Id': session.sessionId, 'MCP-Protocol-Version': PROTOCOL_VERSION },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
  } catch {
    // the process is killed next anyway
  }
}

export interface LoadResult {
  /** 2xx responses whose body contains the echoed result, within the window. */
  good: number;
  /** 2xx responses without the echoed result (JSON-RPC errors, wrong payloads). */
  bad2xx: number;
  non2xx: number;
  /** Connection errors and timeouts as counted by the load generator. */
  errors: number;
  timeouts: number;
  seconds: number;
  latency: LatencySummary;
  /** Responses fully parsed and matched against the id that was sent. */
  sampled: number;
  /** Sampled responses whose id or payload did not match. */
  sampleFailures: number;
  sampleFailureExample?: string;
  bodies: { json: number; sse: number };
  statusCodes: Record<string, number>;
  /** All responses per second as the load generator saw them (autocannon: its own mean), for reference. */
  generatorRps: number;
}

/** The load generator: the lean client (default), or autocannon (general-purpose, more work per response). */
export type LoadClient = 'lean' | 'autocannon';

/** Every `SAMPLE_EVERY`-th response (and the first few) is parsed in full and its id checked. */
const SAMPLE_EVERY = 64;

/**
 * Drives `tools/call echo` at `session` with `connections` keep-alive connections (one request in
 * flight each) for `seconds`. Ids come from one counter shared by all connections, so each is unique.
 */
export async function runLoad(
  session: Session,
  opts: { connections: number; seconds: number; firstId: number; client?: LoadClient },
): Promise<LoadResult> {
  let nextId = opts.firstId;
  let seen = 0;
  let good = 0;
  let bad2xx = 0;
  let sampled = 0;
  let sampleFailures = 0;
  let sampleFailureExample: string | undefined;
  const bodies = { json: 0, sse: 0 };
  const latencies = new Latencies();
  let lastWasGood = false;

  const startedAt = performance.now();
  const windowEnd = startedAt + opts.seconds * 1000;
  let inWindow = true;

  /** Counts one response; true when it is a good one inside the window (its latency is recorded). */
  const account = (status: number, body: string, id: unknown): boolean => {
    inWindow = performance.now() <= windowEnd;
    if (!inWindow) return false;
    seen++;
    if (body.charCodeAt(0) === 0x7b /* { */) bodies.json++;
    else bodies.sse++;
    if (status < 200 || status >= 300) return false;
    const ok = body.includes(ECHO_TEXT);
    if (ok) good++;
    else bad2xx++;
    if (seen <= 16 || seen % SAMPLE_EVERY === 0) {
      sampled++;
      let matched = false;
      try {
        matched = isEchoResult(parseBody(body).messages.find((m) => m.id === id));
      } catch {
        matched = false;
      }
      if (!matched) {
        sampleFailures++;
        sampleFailureExample ??= `id ${String(id)}: ${body.slice(0, 200)}`;
      }
    }
    return ok;
  };
  const finish = (r: { non2xx: number; errors: number; timeouts: number; statusCodes: Record<string, number>; generatorRps: number }): LoadResult => ({
    good,
    bad2xx,
    ...r,
    seconds: Math.min(performance.now() - startedAt, opts.seconds * 1000) / 1000,
    latency: latencies.summary(),
    sampled,
    sampleFailures,
    ...(sampleFailureExample === undefined ? {} : { sampleFailureExample }),
    bodies,
  });
  const headers = { ...BASE_HEADERS, ...session.headers, 'Mcp-Session-Id': session.sessionId };

  if ((opts.client ?? 'lean') === 'lean') {
    let responses = 0;
    const r = await withTimeout(
      leanLoad({
        url: session.url,
        headers,
        connections: opts.connections,
        seconds: opts.seconds,
        timeoutMs: 10_000,
        next: () => {
          const id = nextId++;
          return { id, body: echoCallBody(id) };
        },
        onResponse: (status, body, id, ms) => {
          responses++;
          if (account(status, body, id)) latencies.record(ms);
        },
      }),
      opts.seconds * 1000 + 20_000,
      'lean HTTP load',
    );
    return finish({ ...r, generatorRps: responses / opts.seconds });
  }

  const request: AcRequest = {
    method: 'POST',
    path: new URL(session.url).pathname,
    setupRequest: (req, context) => {
      const id = nextId++;
      context.id = id;
      req.body = echoCallBody(id);
      return req;
    },
    onResponse: (status, body, context) => {
      lastWasGood = account(status, body, context.id);
    },
  };

  const result = await withTimeout(
    new Promise<AcResult>((resolve, reject) => {
      const instance = autocannon(
        {
          url: session.url,
          connections: opts.connections,
          duration: opts.seconds,
          pipelining: 1,
          timeout: 10,
          headers,
          requests: [request],
        },
        (err, res) => (err !== null && err !== undefined ? reject(err) : resolve(res)),
      );
      // Fires right after `onResponse` for the same response, synchronously.
      instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (inWindow && lastWasGood && status >= 200 && status < 300) latencies.record(ms);
      });
      // autocannon stops by itself; this is only the backstop if it does not.
      const backstop = setTimeout(() => instance.stop(), opts.seconds * 1000 + 5000);
      backstop.unref();
      instance.once('done', () => clearTimeout(backstop));
    }),
    opts.seconds * 1000 + 20_000,
    'autocannon run',
  );

  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return finish({ non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts, statusCodes, generatorRps: result.requests.average });
}

/** Runs `runLoad` for the warm-up, discarding the figures but failing on a broken path. */
export async function warmUp(session: Session, connections: number, seconds: number, client?: LoadClient): Promise<void> {
  const r = await runLoad(session, { connections, seconds, firstId: 1_000_000_000, ...(client === undefined ? {} : { client }) });
  if (r.good === 0) {
    throw new Error(
      `warm-up: no good responses (errors ${r.errors}, non-2xx ${r.non2xx}, bad 2xx ${r.bad2xx}, codes ${JSON.stringify(r.statusCodes)})`,
    );
  }
}
