/**
 * The `audit` stage: one audit event per request (ToolHive `pkg/audit`, spec proxy-auth-authz §5).
 *
 * It sits before `auth`, so it sees every final status, 401 and 403 included. The event is written when
 * the response is done (or, for a GET that opens an event stream, once when the stream starts), from
 * what the inner stages left in the context: the parsed MCP call, the identity. The stage queues the
 * event's parts; the sink renders and writes them in batches (src/telemetry/audit-sink.ts).
 */
import type { ServerResponse } from 'node:http';
import {
  auditDelegation,
  auditEventType,
  auditOutcome,
  auditSourceJson,
  auditSubjectsJson,
  dataValue,
  jsonRpcErrorOf,
  targetType,
  type AuditLineParts,
  type AuditOutcome,
} from '../telemetry/audit-event.js';
import { auditsType, type AuditSettings } from '../telemetry/audit-config.js';
import type { AuditSink } from '../telemetry/audit-sink.js';
import { firstHeader } from '../transport/http-util.js';
import { onResponseDone } from './response-done.js';
import type { NamedMiddleware, ProxyContext } from './types.js';

export const AUDIT_STAGE = 'audit';

export interface AuditStageOptions {
  settings: AuditSettings;
  sink: AuditSink;
  /** The workload name (component when the config names none). */
  serverName: string;
  /** Legacy SSE transport (GET opens the event stream; metadata.extra.transport "sse"). */
  sseTransport: boolean;
  /** `--trust-proxy-headers`: take the source address from X-Forwarded-For / X-Real-IP. */
  trustProxyHeaders: boolean;
  /**
   * Every 2xx answer of a JSON-RPC request is sent whole by our own code and left in `ctx.answerJson`
   * (the stdio bridge): application errors are read there instead of from wrapped writes.
   */
  answersReported?: boolean;
}

/** How much of an answer is read to recognise a JSON-RPC error (ToolHive's limit). */
const ERROR_SNIFF_BYTES = 512;
/** How many `source` and `target` texts the stage keeps. */
const MAX_CACHED_TEXTS = 1024;
/** Unparsed request bodies up to this size are read for the method of a refused request. */
const REFUSED_BODY_PEEK = 64 * 1024;

export function audit(options: AuditStageOptions): NamedMiddleware {
  const { settings, sink, sseTransport, trustProxyHeaders } = options;
  const watchWrites = settings.includeResponseData || (settings.detectApplicationErrors && options.answersReported !== true);
  const component = settings.component ?? (options.serverName || 'toolhive-api');
  const transport = sseTransport ? 'sse' : 'http';
  const sniff = settings.detectApplicationErrors;
  const keepResponse = settings.includeResponseData;
  const componentJson = JSON.stringify(component);
  /** JSON texts of the `source` and `target` parts that repeat from request to request. */
  const texts = new Map<string, string>();
  let lastTarget: { endpoint: string; shownMethod: string; isStreamOpen: boolean; method: string | undefined; name: string | undefined; text: string } | undefined;
  return {
    name: AUDIT_STAGE,
    async handle(ctx, next) {
      const { req, res } = ctx;
      const isStreamOpen = req.method === 'GET' && (firstHeader(req.headers.accept) ?? '').includes('text/event-stream');
      const capture = watchWrites ? new ResponseCapture(res, keepResponse ? settings.maxDataSize : 0) : undefined;
      let done = false;
      const emit = (endedAt?: number): void => {
        if (done) return;
        done = true;
        capture?.release();
        try {
          const entry = buildEntry(ctx, endedAt ?? performance.now(), isStreamOpen, capture);
          if (entry !== undefined) sink.write(entry);
        } catch {
          // An audit event that cannot be built must never break the request.
        }
      };
      if (isStreamOpen) {
        // Logged once, when the stream opens (its status is known), not when it ends hours later.
        const writeHead = res.writeHead;
        res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
          const out = (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
          emit();
          return out;
        } as typeof res.writeHead;
      }
      onResponseDone(res, emit);
      return next();
    },
  };

  function buildEntry(ctx: ProxyContext, endedAt: number, isStreamOpen: boolean, capture: ResponseCapture | undefined): AuditLineParts | undefined {
    const { req, res } = ctx;
    let method = ctx.mcp?.method;
    let resourceId = ctx.mcp?.resourceId;
    if (method === undefined && ctx.body !== undefined && ctx.body.length <= REFUSED_BODY_PEEK) {
      // Refused before parsing (401): still name what was asked for.
      const peeked = peekCall(ctx.body);
      method = peeked.method;
      resourceId = peeked.resourceId;
    }
    const httpMethod = req.method ?? 'GET';
    const type = isStreamOpen && method === undefined ? 'sse_connection' : auditEventType(method, httpMethod, sseTransport);
    if (!auditsType(settings, type)) return undefined;
    const status = res.statusCode;
    let outcome: AuditOutcome = auditOutcome(status);
    const ua = firstHeader(req.headers['user-agent']);
    // metadata.extra beyond duration_ms and transport, in the order ToolHive writes them.
    let more: Record<string, unknown> | undefined;
    const head = outcome === 'success' && sniff ? (capture?.head ?? answerHead(ctx.answerJson)) : undefined;
    if (head !== undefined) {
      const err = jsonRpcErrorOf(head);
      if (err !== undefined) {
        outcome = 'application_error';
        more = { jsonrpc_error_code: err.code, jsonrpc_error_message: err.message };
      }
    }
    if (isStreamOpen && ua !== undefined) (more ??= {}).user_agent = ua;
    let data: { request?: unknown; response?: unknown } | undefined;
    if (settings.includeRequestData || keepResponse) {
      data = {};
      if (settings.includeRequestData) {
        const body = ctx.messageChanged && ctx.message !== undefined ? JSON.stringify(ctx.message) : ctx.body?.toString('utf8');
        if (body !== undefined && Buffer.byteLength(body) <= settings.maxDataSize) data.request = dataValue(body);
      }
      if (keepResponse && capture !== undefined) {
        (more ??= {}).response_size_bytes = capture.total;
        if (capture.kept.length > 0) data.response = dataValue(Buffer.concat(capture.kept).toString('utf8'));
      }
      if (data.request === undefined && data.response === undefined) data = undefined;
    }
    const duration = Math.floor(endedAt - ctx.startedAt);
    const delegation = auditDelegation(ctx.identity?.claims, settings.maxDelegationDepth);
    return {
      at: Date.now(),
      type,
      outcome,
      component: componentJson,
      source: sourceJson(sourceAddress(ctx, trustProxyHeaders), ua, firstHeader(req.headers['x-request-id'])),
      subjects: auditSubjectsJson(ctx.identity),
      delegation: delegation === undefined ? undefined : JSON.stringify(delegation),
      target: targetJson(ctx.path, isStreamOpen ? httpMethod : (method ?? httpMethod), isStreamOpen, method, isStreamOpen ? undefined : resourceId),
      extra: more === undefined ? `{"duration_ms":${duration},"transport":"${transport}"}` : JSON.stringify({ duration_ms: duration, transport, ...more }),
      data: data === undefined ? undefined : JSON.stringify(data),
    };
  }

  /** `source` as JSON text; kept per address and user agent (a request id makes it one of a kind). */
  function sourceJson(ip: string, ua: string | undefined, requestId: string | undefined): string {
    if (requestId !== undefined) return auditSourceJson(ip, ua === undefined ? { request_id: requestId } : { user_agent: ua, request_id: requestId });
    // Unambiguous keys: the address is length-prefixed, and the two forms start differently.
    const key = ua === undefined ? `a${ip}` : `b${ip.length}:${ip}${ua}`;
    let text = texts.get(key);
    if (text === undefined) {
      text = auditSourceJson(ip, ua === undefined ? {} : { user_agent: ua });
      remember(key, text);
    }
    return text;
  }

  /** `target` as JSON text, kept per endpoint, method and resource. */
  function targetJson(endpoint: string, shownMethod: string, isStreamOpen: boolean, method: string | undefined, name: string | undefined): string {
    // Steady traffic repeats one target: compare with the last one before building a key.
    const l = lastTarget;
    if (l !== undefined && l.name === name && l.shownMethod === shownMethod && l.endpoint === endpoint && l.isStreamOpen === isStreamOpen && l.method === method) return l.text;
    const text = targetJsonOf(endpoint, shownMethod, isStreamOpen, method, name);
    lastTarget = { endpoint, shownMethod, isStreamOpen, method, name, text };
    return text;
  }

  function targetJsonOf(endpoint: string, shownMethod: string, isStreamOpen: boolean, method: string | undefined, name: string | undefined): string {
    const key = isStreamOpen ? `s${endpoint.length}:${endpoint}${shownMethod}` : `t${endpoint.length}:${endpoint}${shownMethod.length}:${shownMethod}${name ?? ''}`;
    let text = texts.get(key);
    if (text === undefined) {
      const target: Record<string, string> = isStreamOpen
        ? { endpoint, method: shownMethod, type: 'sse_endpoint' }
        : { endpoint, method: shownMethod, type: targetType(method) };
      if (name !== undefined && name !== '') target.name = name;
      text = JSON.stringify(target);
      remember(key, text);
    }
    return text;
  }

  function remember(key: string, text: string): void {
    // Callers choose user agents and tool names: past the limit the cache starts afresh instead of growing.
    if (texts.size >= MAX_CACHED_TEXTS) texts.clear();
    texts.set(key, text);
  }
}

/**
 * The caller's address. ToolHive trusts X-Forwarded-For / X-Real-IP from anyone; we only do with
 * --trust-proxy-headers, so that a client cannot write someone else's address into the audit log.
 */
function sourceAddress(ctx: ProxyContext, trustProxyHeaders: boolean): string {
  const h = ctx.req.headers;
  if (trustProxyHeaders) {
    const xff = firstHeader(h['x-forwarded-for']);
    if (xff !== undefined && xff.trim() !== '') return xff.split(',')[0]!.trim();
    const real = firstHeader(h['x-real-ip']);
    if (real !== undefined && real.trim() !== '') return real.trim();
  }
  const remote = ctx.req.socket.remoteAddress ?? '';
  return remote.startsWith('::ffff:') ? remote.slice(7) : remote;
}

/** What ResponseCapture would have seen of an answer sent whole: its first ERROR_SNIFF_BYTES bytes. */
function answerHead(json: string | undefined): string | undefined {
  if (json === undefined || json.length <= ERROR_SNIFF_BYTES / 4) return json;
  const head = json.slice(0, ERROR_SNIFF_BYTES);
  // Beyond ASCII the first 512 characters are more than 512 bytes: cut where the bytes end.
  return Buffer.byteLength(head) <= ERROR_SNIFF_BYTES ? head : Buffer.from(head).subarray(0, ERROR_SNIFF_BYTES).toString('utf8');
}

function peekCall(body: Buffer): { method?: string; resourceId?: string } {
  try {
    const msg = JSON.parse(body.toString('utf8')) as { method?: unknown; params?: { name?: unknown; uri?: unknown } };
    const method = typeof msg.method === 'string' ? msg.method : undefined;
    const p = msg.params;
    const resourceId = typeof p?.name === 'string' ? p.name : typeof p?.uri === 'string' ? p.uri : undefined;
    return { method, resourceId };
  } catch {
    return {};
  }
}

/**
 * Watches what a response writes: its first bytes (to recognise a JSON-RPC error) and, when asked, the
 * body up to a size. Wraps write/end on this one response object and restores them when done.
 */
class ResponseCapture {
  head: string | undefined;
  readonly kept: Buffer[] = [];
  total = 0;
  private keptBytes = 0;
  private readonly write: ServerResponse['write'];
  private readonly end: ServerResponse['end'];

  constructor(
    private readonly res: ServerResponse,
    private readonly keepUpTo: number,
  ) {
    this.write = res.write;
    this.end = res.end;
    const self = this;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      self.see(chunk);
      return (self.write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'function') self.see(chunk);
      return (self.end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
  }

  release(): void {
    this.res.write = this.write;
    this.res.end = this.end;
  }

  private see(chunk: unknown): void {
    if (chunk === undefined || chunk === null) return;
    const isString = typeof chunk === 'string';
    if (!isString && !(chunk instanceof Uint8Array)) return;
    if (this.head === undefined) {
      const text = isString ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, ERROR_SNIFF_BYTES)).toString('utf8');
      this.head = text.length > ERROR_SNIFF_BYTES ? text.slice(0, ERROR_SNIFF_BYTES) : text;
    }
    if (this.keepUpTo > 0) {
      const buf = isString ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.total += buf.length;
      if (this.keptBytes + buf.length <= this.keepUpTo) {
        this.kept.push(Buffer.from(buf));
        this.keptBytes += buf.length;
      }
    }
  }
}
