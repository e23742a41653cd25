/**
 * A real node:http server on 127.0.0.1 that runs a list of middlewares the way the proxy core does:
 * it reads the body, parses the JSON-RPC message into `ctx.message` / `ctx.mcp`, runs the chain, and as
 * the terminal handler records what would have been forwarded and answers with a canned server
 * response after applying `ctx.responseTransforms` in reverse order of registration.
 *
 * Canned server messages are deep-frozen, so a transform that mutates its input throws (and the test
 * sees a 500).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { McpCall, NamedMiddleware, ProxyContext } from '../../src/middleware/types.js';
import { classify, type JsonRpcMessage } from '../../src/transport/jsonrpc.js';

export interface Forwarded {
  /** The message the server would receive: `ctx.message` when a stage changed it, else the body as sent. */
  message: JsonRpcMessage | undefined;
  /** Whether a stage set `ctx.messageChanged`. */
  changed: boolean;
  /** `ctx.mcp` as the chain left it. */
  mcp: McpCall | undefined;
}

/** What the fake server answers; one message, several (sent as SSE), or undefined (202, empty). */
export type Responder = (message: JsonRpcMessage | undefined, ctx: ProxyContext) => JsonRpcMessage | JsonRpcMessage[] | undefined;

export interface HarnessResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  json: unknown;
  /** The JSON-RPC messages delivered: the JSON body, or the `data:` lines of an SSE body. */
  messages: JsonRpcMessage[];
}

export interface RequestOptions {
  method?: string;
  path?: string;
  /** Header values given as arrays are sent as repeated header lines. */
  headers?: OutgoingHttpHeaders;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
}

export interface Harness {
  url: string;
  port: number;
  /** One entry per request that reached the terminal handler, in arrival order. */
  forwarded: Forwarded[];
  request(options: RequestOptions): Promise<HarnessResponse>;
  /** POST a JSON-RPC message to /mcp with MCP's usual headers (overridable). */
  rpc(message: unknown, headers?: OutgoingHttpHeaders): Promise<HarnessResponse>;
  /** Writes bytes on a fresh TCP connection and returns everything the server sent back. */
  raw(bytes: string): Promise<string>;
  close(): Promise<void>;
}

export const CANNED_TOOLS = [
  {
    name: 'fetch',
    description: 'Fetches a URL',
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    annotations: { readOnlyHint: true },
  },
  { name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'add', description: 'Adds two numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
];

/** tools/list → CANNED_TOOLS; tools/call → a text result naming the tool the server was asked for; others → echo. */
export const defaultResponder: Responder = (message) => {
  if (message === undefined || message.id === undefined || message.id === null || message.method === undefined) return undefined;
  const params = (message.params ?? {}) as Record<string, unknown>;
  switch (message.method) {
    case 'tools/list':
      return { jsonrpc: '2.0', id: message.id, result: { tools: CANNED_TOOLS, nextCursor: 'c2' } };
    case 'tools/call':
      return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: `called ${String(params.name)}` }] } };
    default:
      return { jsonrpc: '2.0', id: message.id, result: { echo: message } };
  }
};

/**
 * `middlewares` may be a function of the listening port, for stages that need it (the origin guard);
 * it is called once, after the server listens and before the first request.
 */
export async function startHarness(
  middlewares: ReadonlyArray<NamedMiddleware | undefined> | ((port: number) => ReadonlyArray<NamedMiddleware | undefined>),
  respond: Responder = defaultResponder,
): Promise<Harness> {
  let stages: NamedMiddleware[] = [];
  const forwarded: Forwarded[] = [];

  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      let message: JsonRpcMessage | undefined;
      let mcp: McpCall | undefined;
      if (req.method === 'POST' && body !== undefined && body.length > 0) {
        try {
          const parsed: unknown = JSON.parse(body.toString('utf8'));
          const kind = classify(parsed);
          if (kind !== 'invalid') {
            message = parsed as JsonRpcMessage;
            mcp = describe(message, kind);
          }
        } catch {
          // Unparsable bodies travel as bytes; the stages see no message.
        }
      }
      const ctx: ProxyContext = {
        req,
        res,
        path: q < 0 ? url : url.slice(0, q),
        query: q < 0 ? '' : url.slice(q + 1),
        body,
        message,
        mcp,
        messageChanged: false,
        identity: undefined,
        responseTransforms: [],
        startedAt: performance.now(),
        answerJson: undefined,
        locals: new Map(),
      };
      const terminal = async (): Promise<void> => {
        const sent = ctx.messageChanged ? ctx.message : body === undefined ? undefined : (tryParse(body) as JsonRpcMessage | undefined);
        // Record a copy, so later mutation by anyone cannot change what the test reads.
        forwarded.push({ message: clone(sent), changed: ctx.messageChanged, mcp: clone(ctx.mcp) });
        const answer = respond(sent === undefined ? undefined : deepFreeze(clone(sent)!), ctx);
        if (answer === undefined) {
          res.writeHead(202).end();
          return;
        }
        const apply = (m: JsonRpcMessage): JsonRpcMessage => {
          let out = m;
          for (let i = ctx.responseTransforms.length - 1; i >= 0; i--) out = ctx.responseTransforms[i]!(out);
          return out;
        };
        if (Array.isArray(answer)) {
          res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          for (const m of answer) res.write(`event: message\ndata: ${JSON.stringify(apply(deepFreeze(clone(m)!)))}\n\n`);
          res.end();
          return;
        }
        const text = JSON.stringify(apply(deepFreeze(clone(answer)!)));
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      };
      const dispatch = (i: number): Promise<void> => (i === stages.length ? terminal() : stages[i]!.handle(ctx, () => dispatch(i + 1)));
      await dispatch(0);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`harness error: ${err instanceof Error ? err.message : String(err)}`);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  stages = (typeof middlewares === 'function' ? middlewares(port) : middlewares).filter((m): m is NamedMiddleware => m !== undefined);

  const request = (options: RequestOptions): Promise<HarnessResponse> =>
    new Promise((resolve, reject) => {
      const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      const headers: OutgoingHttpHeaders = { ...options.headers };
      if (payload !== undefined && headers['content-length'] === undefined) headers['content-length'] = Buffer.byteLength(payload);
      const req = httpRequest(
        { host: '127.0.0.1', port, method: options.method ?? (payload === undefined ? 'GET' : 'POST'), path: options.path ?? '/mcp', headers, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const json = tryParse(text);
            let messages: JsonRpcMessage[] = [];
            if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
              messages = text
                .split('\n')
                .filter((l) => l.startsWith('data:'))
                .map((l) => JSON.parse(l.slice(5)) as JsonRpcMessage);
            } else if (json !== undefined) {
              messages = [json as JsonRpcMessage];
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, messages });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    forwarded,
    request,
    rpc: (message, headers) =>
      request({
        method: 'POST',
        body: message,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      }),
    raw: (bytes) =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
        let data = '';
        socket.setEncoding('utf8');
        socket.on('data', (d: string) => (data += d));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
      }),
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

function describe(message: JsonRpcMessage, kind: 'request' | 'notification' | 'response'): McpCall {
  const p = message.params;
  const params = p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : undefined;
  let resourceId: string | undefined;
  let args: Record<string, unknown> | undefined;
  if (message.method === 'tools/call' || message.method === 'prompts/get') {
    resourceId = typeof params?.name === 'string' ? params.name : undefined;
    const a = params?.arguments;
    args = a !== null && typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : undefined;
  } else if (message.method?.startsWith('resources/') && typeof params?.uri === 'string') {
    resourceId = params.uri;
  }
  return { kind, method: message.method, id: message.id ?? undefined, params, resourceId, arguments: args };
}

function tryParse(text: string | Buffer): unknown {
  try {
    return text.length === 0 ? undefined : JSON.parse(text.toString());
  } catch {
    return undefined;
  }
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v as object)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}
