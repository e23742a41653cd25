/**
 * The `telemetry` stage: one span and a set of metric points per MCP request (ToolHive
 * `pkg/telemetry/middleware.go`, spec run-and-proxy §8.2).
 *
 * Hot path: a request to a stdio server that the ratio drops costs one random number; a sampled one
 * is recorded without the SDK (RootSpanRecorder). Requests to HTTP servers, and requests that carry a
 * trace context, get an SDK span (non-recording when dropped) whose context goes upstream. The metric
 * points are recorded against series found once per (method, status, tool…).
 */
import type { ServerResponse } from 'node:http';
import {
  context as otelContext,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type HrTime,
  type Span,
  type SpanStatus,
  type TextMapGetter,
} from '@opentelemetry/api';
import { millisToHrTime, W3CTraceContextPropagator } from '@opentelemetry/core';
import { type CounterSeries, type HistogramSeries, type Telemetry, type TelemetryInstruments } from '../telemetry/provider.js';
import { formatToolArguments } from '../telemetry/span-attributes.js';
import { firstHeader } from '../transport/http-util.js';
import { onResponseDone } from './response-done.js';
import type { NamedMiddleware, ProxyContext } from './types.js';

export const TELEMETRY_STAGE = 'telemetry';

export interface TelemetryStageOptions {
  telemetry: Telemetry;
  serverName: string;
  /** `stdio`, `sse` or `streamable-http` (the server's transport). */
  transport: string;
  sseTransport: boolean;
}

const propagator = new W3CTraceContextPropagator();

const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (typeof carrier[key] === 'string' ? (carrier[key] as string) : undefined),
};

/** Prometheus label values are cut to this many bytes (ToolHive's limit). */
const MAX_LABEL_BYTES = 128;
/** Request kinds whose series are kept; beyond this, new kinds are looked up on each request. */
const MAX_CACHED_ATTRIBUTE_SETS = 4096;

/** The metric series one kind of request (method, status, tool…) records into. */
interface SeriesBundle {
  requests: CounterSeries;
  requestDuration: HistogramSeries;
  operationDuration: HistogramSeries;
  toolCalls: CounterSeries | undefined;
}

export function telemetry(options: TelemetryStageOptions): NamedMiddleware {
  const { telemetry: tel, serverName, transport } = options;
  const tracing = tel.tracing;
  const instruments = tel.instruments;
  const legacy = tel.useLegacyAttributes;
  const isStdio = transport === 'stdio';
  const sampleRate = tel.samplingRate;
  const networkTransport = isStdio ? 'pipe' : 'tcp';
  /** The metric series one kind of request records into, found once per kind (see seriesFor). */
  const bundles = new Map<string, SeriesBundle>();
  /** The kind of the last request and its series. */
  let last: { status: number; method: string | undefined; resourceId: string; httpMethod: string; isSseOpen: boolean; protocol: string; bundle: SeriesBundle } | undefined;
  const activeReq = instruments?.activeConnections.series('req', { server: serverName, transport });
  const activeSse = instruments?.activeConnections.series('sse', { server: serverName, transport, connection_type: 'sse' });

  /** The series of a request kind: everything its labels are made of is in the key. */
  const seriesFor = (ctx: ProxyContext, ins: TelemetryInstruments, httpMethod: string, status: number, isSseOpen: boolean): SeriesBundle => {
    const method = ctx.mcp?.method;
    const resourceId = ctx.mcp?.resourceId ?? '';
    const protocol = isStdio ? '' : httpVersion(ctx.res);
    // Steady traffic repeats one kind of request: compare with the last one before building a key.
    const l = last;
    if (l !== undefined && l.status === status && l.method === method && l.resourceId === resourceId && l.httpMethod === httpMethod && l.isSseOpen === isSseOpen && l.protocol === protocol) {
      return l.bundle;
    }
    const key = `${isSseOpen ? 's' : 'r'}${httpMethod}\u0000${status}\u0000${method ?? ''}\u0000${protocol}\u0000${resourceId}`;
    let b = bundles.get(key);
    if (b !== undefined) {
      last = { status, method, resourceId, httpMethod, isSseOpen, protocol, bundle: b };
      return b;
    }
    const mcpMethod = isSseOpen ? 'sse_connection' : (method ?? 'unknown');
    // Each instrument keyed by exactly what its attributes hold, so that no two series share a label set.
    const reqKey = `${httpMethod}\u0000${status}\u0000${mcpMethod}\u0000${resourceId}`;
    const reqAttrs: Attributes = {
      method: httpMethod,
      status_code: String(status),
      status: status >= 400 ? 'error' : 'success',
      mcp_method: cut(mcpMethod),
      mcp_resource_id: cut(resourceId),
      server: cut(serverName),
      transport,
    };
    const opMethod = method ?? 'unknown';
    const opName = opMethod === 'tools/call' || opMethod === 'prompts/get' ? resourceId : '';
    const opKey = `${opMethod}\u0000${status >= 500 ? status : ''}\u0000${opName}\u0000${protocol}`;
    const toolKey = `${resourceId}\u0000${status >= 400 ? 'e' : 's'}`;
    b = {
      requests: ins.requests.series(reqKey, reqAttrs),
      requestDuration: ins.requestDuration.series(reqKey, reqAttrs),
      operationDuration: ins.operationDuration.series(opKey, operationAttributes(ctx, status, networkTransport, isStdio, protocol)),
      toolCalls:
        method === 'tools/call' && resourceId !== ''
          ? ins.toolCalls.series(toolKey, { server: serverName, tool: cut(resourceId), status: status >= 400 ? 'error' : 'success' })
          : undefined,
    };
    // Callers choose tool names: past the limit, kinds are looked up afresh each time instead of kept.
    if (bundles.size < MAX_CACHED_ATTRIBUTE_SETS) {
      bundles.set(key, b);
      last = { status, method, resourceId, httpMethod, isSseOpen, protocol, bundle: b };
    }
    return b;
  };

  return {
    name: TELEMETRY_STAGE,
    async handle(ctx, next) {
      const { req, res } = ctx;
      const httpMethod = req.method ?? 'GET';
      const isSseOpen = httpMethod === 'GET' && ctx.path.endsWith('/sse');
      const mcp = ctx.mcp;

      let span: Span | undefined;
      /** The attributes of a sampled stdio root span, recorded without the SDK when the request ends. */
      let rootAttributes: Attributes | undefined;
      let spanName = '';
      const incoming = tracing !== undefined ? incomingParent(ctx) : undefined;
      // A stdio server gets no trace context: a request without one is a root whose span nothing reads
      // while it runs, so the stage samples it (the same ratio of roots) and records it itself.
      const recordRoot = isStdio && incoming === undefined;
      if (tracing !== undefined && (!recordRoot || Math.random() < sampleRate)) {
        spanName = isSseOpen
          ? 'sse.connection_established'
          : mcp?.method !== undefined
            ? mcp.resourceId
              ? `${mcp.method} ${mcp.resourceId}`
              : mcp.method
            : `${httpMethod} ${ctx.path}`;
        if (recordRoot) {
          rootAttributes = requestAttributes(ctx, options, networkTransport, legacy, tel.environmentAttributes, isSseOpen);
          if (isSseOpen) {
            // The stream lives on; its span only marks that it opened.
            const now = hrTimeOf(performance.now());
            tracing.rootSpans.record(spanName, now, now, rootAttributes, { code: SpanStatusCode.UNSET });
          }
        } else {
          span = tracing.tracer.startSpan(spanName, { kind: SpanKind.SERVER }, incoming ?? otelContext.active());
          if (span.isRecording()) span.setAttributes(requestAttributes(ctx, options, networkTransport, legacy, tel.environmentAttributes, isSseOpen));
          if (!isStdio) {
            // W3C trace context for the server: the transparent proxy forwards the request's headers.
            const sc = span.spanContext();
            req.headers.traceparent = `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`;
            if (sc.traceState !== undefined) req.headers.tracestate = sc.traceState.serialize();
          }
          if (isSseOpen) span.end(); // the stream lives on; its span only marks that it opened
        }
      }

      const active = isSseOpen ? activeSse : activeReq;
      if (active !== undefined) active.value++;
      let done = false;
      const finish = (endedAt: number): void => {
        if (done) return;
        done = true;
        const seconds = (endedAt - ctx.startedAt) / 1000;
        const status = res.statusCode;
        if (instruments !== undefined) {
          active!.value--;
          const b = seriesFor(ctx, instruments, httpMethod, status, isSseOpen);
          b.requests.value++;
          b.requestDuration.record(seconds);
          b.operationDuration.record(seconds);
          if (b.toolCalls !== undefined) b.toolCalls.value++;
        }
        if (isSseOpen) return;
        if (rootAttributes !== undefined && tracing !== undefined) {
          const spanStatus = responseAttributes(rootAttributes, res, status, seconds, legacy);
          tracing.rootSpans.record(spanName, hrTimeOf(ctx.startedAt), hrTimeOf(endedAt), rootAttributes, spanStatus);
        } else if (span !== undefined) {
          if (span.isRecording()) {
            const attrs: Attributes = {};
            span.setStatus(responseAttributes(attrs, res, status, seconds, legacy));
            span.setAttributes(attrs);
          }
          span.end();
        }
      };
      onResponseDone(res, finish);
      return next();
    },
  };
}

/** Adds the response's attributes to `attrs`; returns the span status (unset for 4xx, as ToolHive). */
function responseAttributes(attrs: Attributes, res: ServerResponse, status: number, seconds: number, legacy: boolean): SpanStatus {
  const size = Number(res.getHeader('content-length'));
  attrs['http.response.status_code'] = status;
  if (Number.isFinite(size)) attrs['http.response.body.size'] = size;
  if (legacy) {
    attrs['http.status_code'] = status;
    if (Number.isFinite(size)) attrs['http.response_content_length'] = size;
    attrs['http.duration_ms'] = seconds * 1000;
  }
  if (status >= 500) {
    attrs['error.type'] = String(status);
    return { code: SpanStatusCode.ERROR, message: `HTTP ${status}` };
  }
  return { code: status < 400 ? SpanStatusCode.OK : SpanStatusCode.UNSET };
}

/** A `performance.now()` reading as the epoch-based HrTime spans carry. */
function hrTimeOf(now: number): HrTime {
  return millisToHrTime(performance.timeOrigin + now);
}

/** The caller's trace context: W3C headers, else `params._meta.traceparent` (MCP's in-band form); undefined when neither. */
function incomingParent(ctx: ProxyContext): Context | undefined {
  const h = ctx.req.headers;
  if (h.traceparent !== undefined) return propagator.extract(ROOT_CONTEXT, h, headerGetter);
  const meta = (ctx.mcp?.params as { _meta?: unknown } | undefined)?._meta;
  if (meta !== null && typeof meta === 'object' && typeof (meta as { traceparent?: unknown }).traceparent === 'string') {
    return propagator.extract(ROOT_CONTEXT, meta as Record<string, unknown>, metaGetter);
  }
  return undefined;
}

function requestAttributes(
  ctx: ProxyContext,
  options: TelemetryStageOptions,
  networkTransport: string,
  legacy: boolean,
  environment: Record<string, string>,
  isSseOpen: boolean,
): Attributes {
  const { req } = ctx;
  const h = req.headers;
  const host = firstHeader(h.host) ?? '';
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const fullUrl = `${scheme}://${host}${req.url ?? ctx.path}`;
  const serverName = firstHeader(h['x-mcp-server-name']) ?? options.serverName;
  const a: Attributes = {
    'mcp.server.name': serverName,
    'network.transport': networkTransport,
    'client.address': req.socket.remoteAddress ?? '',
    'client.port': req.socket.remotePort ?? 0,
    ...environment,
  };
  if (networkTransport !== 'pipe') {
    a['network.protocol.name'] = 'http';
    a['network.protocol.version'] = req.httpVersion;
  }
  if (options.transport === 'sse') a['mcp.backend.protocol.version'] = '1.1';
  if (isSseOpen) {
    a['sse.event_type'] = 'connection_established';
    return a;
  }
  a['http.request.method'] = req.method ?? 'GET';
  a['url.full'] = fullUrl;
  a['url.scheme'] = scheme;
  a['server.address'] = host;
  a['url.path'] = ctx.path;
  const ua = firstHeader(h['user-agent']);
  if (ua !== undefined) a['user_agent.original'] = ua;
  const bodySize = ctx.body?.length ?? 0;
  if (bodySize > 0) a['http.request.body.size'] = bodySize;
  if (ctx.query !== '') a['url.query'] = ctx.query;
  const session = firstHeader(h['mcp-session-id']);
  if (session !== undefined) a['mcp.session.id'] = session;
  const protocol = firstHeader(h['mcp-protocol-version']);
  if (protocol !== undefined) a['mcp.protocol.version'] = protocol;
  if (legacy) {
    a['http.method'] = req.method ?? 'GET';
    a['http.url'] = fullUrl;
    a['http.scheme'] = scheme;
    a['http.host'] = host;
    a['http.target'] = req.url ?? ctx.path;
    if (ua !== undefined) a['http.user_agent'] = ua;
    if (bodySize > 0) a['http.request_content_length'] = bodySize;
    if (ctx.query !== '') a['http.query'] = ctx.query;
    a['mcp.transport'] = options.transport;
  }
  const mcp = ctx.mcp;
  if (mcp?.method !== undefined) {
    a['mcp.method.name'] = mcp.method;
    a['rpc.system.name'] = 'jsonrpc';
    a['jsonrpc.protocol.version'] = '2.0';
    if (mcp.id !== undefined && mcp.id !== null) a['jsonrpc.request.id'] = String(mcp.id);
    if (legacy) {
      a['mcp.method'] = mcp.method;
      a['rpc.system'] = 'jsonrpc';
      a['rpc.service'] = 'mcp';
      if (mcp.id !== undefined && mcp.id !== null) a['mcp.request.id'] = String(mcp.id);
      if (mcp.resourceId !== undefined) a['mcp.resource.id'] = mcp.resourceId;
    }
    switch (mcp.method) {
      case 'tools/call':
        if (mcp.resourceId !== undefined) {
          a['gen_ai.tool.name'] = mcp.resourceId;
          if (legacy) a['mcp.tool.name'] = mcp.resourceId;
        }
        a['gen_ai.operation.name'] = 'execute_tool';
        if (mcp.arguments !== undefined) {
          const args = formatToolArguments(mcp.arguments);
          a['gen_ai.tool.call.arguments'] = args;
          if (legacy) a['mcp.tool.arguments'] = args;
        }
        break;
      case 'prompts/get':
        if (mcp.resourceId !== undefined) {
          a['gen_ai.prompt.name'] = mcp.resourceId;
          if (legacy) a['mcp.prompt.name'] = mcp.resourceId;
        }
        break;
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe':
      case 'notifications/resources/updated':
        if (mcp.resourceId !== undefined) a['mcp.resource.uri'] = mcp.resourceId;
        break;
      case 'initialize':
        if (mcp.resourceId !== undefined) a['mcp.client.name'] = mcp.resourceId;
        break;
    }
  }
  return a;
}

function operationAttributes(ctx: ProxyContext, status: number, networkTransport: string, isStdio: boolean, protocolVersion: string): Attributes {
  const method = ctx.mcp?.method;
  const a: Attributes = {
    'mcp.method.name': method ?? 'unknown',
    'jsonrpc.protocol.version': '2.0',
    'network.transport': networkTransport,
  };
  if (!isStdio) {
    a['network.protocol.name'] = 'http';
    a['network.protocol.version'] = protocolVersion;
  }
  if (status >= 500) a['error.type'] = String(status);
  const name = ctx.mcp?.resourceId;
  if (method === 'tools/call') {
    a['gen_ai.operation.name'] = 'execute_tool';
    if (name !== undefined) a['gen_ai.tool.name'] = cut(name);
  } else if (method === 'prompts/get' && name !== undefined) {
    a['gen_ai.prompt.name'] = cut(name);
  }
  return a;
}

function httpVersion(res: ServerResponse): string {
  return res.req?.httpVersion ?? '1.1';
}

/** A label value cut to 128 bytes without splitting a character. */
function cut(value: string): string {
  if (value.length <= MAX_LABEL_BYTES / 4 || Buffer.byteLength(value) <= MAX_LABEL_BYTES) return value;
  let out = '';
  let bytes = 0;
  for (const ch of value) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > MAX_LABEL_BYTES) break;
    out += ch;
    bytes += n;
  }
  return out;
}

