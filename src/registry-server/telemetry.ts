/**
 * The registry service's `telemetry` block (spec §2.6): OTLP/HTTP metrics and traces, and the same
 * metrics as Prometheus text for `/metrics` on the internal server. Instrument names are the
 * reference's (`thv_reg_srv_*`). Nothing is registered globally, so several instances in one process
 * (tests) keep their own numbers. The OTLP URL rules are the proxy's (src/telemetry/provider.ts).
 */
import { context, SpanKind, SpanStatusCode, type Attributes, type Counter, type Histogram, type Tracer, type UpDownCounter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { OtlpTraceExporter } from '../telemetry/otlp-trace-exporter.js';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../logging.js';
import { otlpUrl } from '../telemetry/provider.js';
import type { TelemetryConfig } from './config.js';

const SCOPE = 'github.com/stacklok/toolhive-registry-server';
const DEFAULT_EXPORT_INTERVAL_MS = 60_000;

export interface RegistryTelemetry {
  /** Records metrics and spans of every public request (route templates, never raw names). */
  middleware: MiddlewareHandler | undefined;
  /** A finished sync of one source (`registry` attribute = source name, as in the reference). */
  recordSync(source: string, seconds: number, success: boolean, servers?: number): void;
  /** Prometheus text, when metrics are enabled. */
  metrics: (() => Promise<string>) | undefined;
  shutdown(): Promise<void>;
}

const NOOP: RegistryTelemetry = { middleware: undefined, recordSync: () => undefined, metrics: undefined, shutdown: async () => undefined };

/**
 * The route template of a public path, so that metric series stay bounded: registry and server names
 * never become label values.
 */
export function routeOf(path: string): string {
  const seg = path.split('/');
  if (seg[1] === 'registry' && seg[3] === 'v0.1' && seg[4] === 'servers') {
    const base = '/registry/{registryName}/v0.1/servers';
    if (seg.length === 5) return base;
    if (seg.length === 7 && seg[6] === 'versions') return `${base}/{serverName}/versions`;
    if (seg.length === 8 && seg[6] === 'versions') return `${base}/{serverName}/versions/{version}`;
    return 'unknown_route';
  }
  if (seg[1] === 'v1') {
    const rest = seg.slice(2);
    if (rest.length === 1 && ['me', 'sources', 'registries', 'entries'].includes(rest[0]!)) return `/v1/${rest[0]}`;
    if ((rest[0] === 'sources' || rest[0] === 'registries') && rest.length === 2) return `/v1/${rest[0]}/{name}`;
    if ((rest[0] === 'sources' || rest[0] === 'registries') && rest.length === 3 && rest[2] === 'entries') return `/v1/${rest[0]}/{name}/entries`;
    if (rest[0] === 'entries' && rest.length === 4 && rest[3] === 'claims') return '/v1/entries/{type}/{name}/claims';
    if (rest[0] === 'entries' && rest.length === 5 && rest[3] === 'versions') return '/v1/entries/{type}/{name}/versions/{version}';
    return 'unknown_route';
  }
  if (path === '/openapi.json') return path;
  if (path.startsWith('/.well-known/oauth-protected-resource')) return '/.well-known/oauth-protected-resource';
  return 'unknown_route';
}

export function startRegistryTelemetry(cfg: TelemetryConfig | undefined, logger: Logger, env: NodeJS.ProcessEnv = process.env): RegistryTelemetry {
  if (!cfg?.enabled || (!cfg.metrics.enabled && !cfg.tracing.enabled)) return NOOP;
  const resource = resourceFromAttributes({ 'service.name': cfg.serviceName, 'service.version': cfg.serviceVersion });

  let tracerProvider: BasicTracerProvider | undefined;
  let tracer: Tracer | undefined;
  if (cfg.tracing.enabled) {
    tracerProvider = new BasicTracerProvider({
      resource,
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(cfg.tracing.sampling) }),
      spanProcessors: [new BatchSpanProcessor(new OtlpTraceExporter({ url: otlpUrl(cfg.endpoint, cfg.insecure, 'traces'), headers: {} }))],
    });
    tracer = tracerProvider.getTracer(SCOPE);
  }

  let meterProvider: MeterProvider | undefined;
  let prometheus: PrometheusExporter | undefined;
  let http: { duration: Histogram; total: Counter; active: UpDownCounter } | undefined;
  let sync: { duration: Histogram; servers: { record(v: number, a: Attributes): void } } | undefined;
  if (cfg.metrics.enabled) {
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    prometheus = new PrometheusExporter({ preventServerStart: true });
    const readers: IMetricReader[] = [
      prometheus,
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: otlpUrl(cfg.endpoint, cfg.insecure, 'metrics') }),
        exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_EXPORT_INTERVAL_MS,
      }),
    ];
    meterProvider = new MeterProvider({ resource, readers });
    const httpMeter = meterProvider.getMeter(`${SCOPE}/http`);
    http = {
      duration: httpMeter.createHistogram('thv_reg_srv_http_request_duration_seconds', {
        description: 'Duration of HTTP requests in seconds',
        unit: 's',
        advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
      }),
      total: httpMeter.createCounter('thv_reg_srv_http_requests_total', { description: 'Total number of HTTP requests', unit: '{request}' }),
      active: httpMeter.createUpDownCounter('thv_reg_srv_http_active_requests', { description: 'Number of currently in-flight HTTP requests', unit: '{request}' }),
    };
    sync = {
      duration: meterProvider.getMeter(`${SCOPE}/sync`).createHistogram('thv_reg_srv_sync_duration_seconds', {
        description: 'Duration of sync operations in seconds',
        unit: 's',
        advice: { explicitBucketBoundaries: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] },
      }),
      servers: meterProvider.getMeter(`${SCOPE}/registry`).createGauge('thv_reg_srv_servers_total', { description: 'Number of servers in each registry', unit: '{server}' }),
    };
  }

  const propagator = new W3CTraceContextPropagator();
  const middleware: MiddlewareHandler = async (c, next) => {
    const start = performance.now();
    const method = c.req.method;
    const route = routeOf(c.req.path);
    http?.active.add(1);
    let span: ReturnType<Tracer['startSpan']> | undefined;
    if (tracer) {
      const parent = propagator.extract(context.active(), c.req.raw.headers, { get: (h, k) => h.get(k) ?? undefined, keys: (h) => [...h.keys()] });
      span = tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } }, parent);
    }
    try {
      await next();
    } finally {
      const status = c.res.status;
      http?.active.add(-1);
      const attrs = { method, route, status_code: String(status) };
      http?.duration.record((performance.now() - start) / 1000, attrs);
      http?.total.add(1, attrs);
      if (span) {
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    }
  };

  const serializer = new PrometheusSerializer('', false);
  if (cfg.endpoint) logger.info({ endpoint: cfg.endpoint, tracing: cfg.tracing.enabled, metrics: cfg.metrics.enabled }, 'telemetry enabled');
  return {
    middleware,
    recordSync(source, seconds, success, servers) {
      sync?.duration.record(seconds, { registry: source, success });
      if (success && servers !== undefined) sync?.servers.record(servers, { registry: source });
    },
    metrics: prometheus ? async () => serializer.serialize((await prometheus.collect()).resourceMetrics) : undefined,
    async shutdown() {
      await Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
    },
  };
}
