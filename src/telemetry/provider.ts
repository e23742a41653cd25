/**
 * OpenTelemetry for one proxy (spec run-and-proxy §8.1): a tracer provider exporting OTLP/HTTP
 * (protobuf) with a parent-based trace-id-ratio sampler, a meter provider exporting OTLP/HTTP and/or
 * serving Prometheus text, the resource (service name, version, custom attributes), and the
 * instruments the telemetry stage records into. Nothing is registered globally: the stage uses the
 * providers it is given, so two proxies in one process (tests) do not share state.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ValueType,
  type Attributes,
  type HrTime,
  type ObservableResult,
  type Tracer,
} from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
  type IMetricReader,
  type MetricProducer,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { TelemetryConfigJson } from '../config/run-config.js';
import type { Logger } from '../logging.js';
import { VERSION } from '../version.js';
import { OtlpTraceExporter } from './otlp-trace-exporter.js';
import { RootSpanRecorder } from './root-span-recorder.js';

/** ToolHive's instrumentation scope, so that dashboards built for it match. */
export const INSTRUMENTATION_SCOPE = 'github.com/stacklok/toolhive/pkg/telemetry';

export const DEFAULT_SAMPLING_RATE = 0.1;
/** OTLP metric export interval (ms); `OTEL_METRIC_EXPORT_INTERVAL` overrides, as in every OTel SDK. */
const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;

/** Buckets of `mcp.server.operation.duration` (seconds), from the MCP semantic conventions. */
const OPERATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** One labelled series of a LocalCounter: callers that keep it add to `value` directly. */
export interface CounterSeries {
  readonly attributes: Attributes;
  value: number;
}

/**
 * A counter summed here and reported to the SDK through an observable instrument at collection time.
 * Recording into an SDK counter hashes its attribute set on every call (a third of the telemetry cost
 * per request, measured); here a caller finds its series once (`series`) and keeps it.
 */
export class LocalCounter {
  private readonly totals = new Map<string, CounterSeries>();

  constructor(private readonly maxSeries = 2000) {}

  /** The series of `key` (created with `attributes` when new); past the cardinality limit, the overflow series. */
  series(key: string, attributes: Attributes): CounterSeries {
    let t = this.totals.get(key);
    if (t === undefined) {
      // Past the cardinality limit, new series fold into one overflow series (as the SDK does).
      if (this.totals.size >= this.maxSeries) return this.series('\u0000overflow', { 'otel.metric.overflow': true });
      t = { attributes, value: 0 };
      this.totals.set(key, t);
    }
    return t;
  }

  observe(result: ObservableResult): void {
    for (const t of this.totals.values()) result.observe(t.value, t.attributes);
  }
}

/** One labelled series of a LocalHistogram (cumulative explicit buckets). */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;

  constructor(
    readonly attributes: Attributes,
    private readonly boundaries: readonly number[],
  ) {
    this.counts = new Array<number>(boundaries.length + 1).fill(0);
  }

  record(value: number): void {
    const b = this.boundaries;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
}

/** The SDK's default explicit bucket boundaries (what `toolhive_mcp_request_duration` uses in ToolHive too). */
const DEFAULT_BUCKETS = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];

/**
 * A cumulative explicit-bucket histogram kept here and handed to the readers by a MetricProducer, for
 * the same reason as LocalCounter: the SDK would hash the attribute set of every recorded value.
 */
export class LocalHistogram {
  private readonly byKey = new Map<string, HistogramSeries>();
  private readonly start: HrTime = millisToHrTime(Date.now());

  constructor(
    readonly name: string,
    readonly description: string,
    readonly boundaries: readonly number[],
    private readonly maxSeries = 2000,
  ) {}

  /** The series of `key` (created with `attributes` when new); past the cardinality limit, the overflow series. */
  series(key: string, attributes: Attributes): HistogramSeries {
    let s = this.byKey.get(key);
    if (s === undefined) {
      if (this.byKey.size >= this.maxSeries) return this.series('\u0000overflow', { 'otel.metric.overflow': true });
      s = new HistogramSeries(attributes, this.boundaries);
      this.byKey.set(key, s);
    }
    return s;
  }

  data(end: HrTime): HistogramMetricData | undefined {
    if (this.byKey.size === 0) return undefined;
    return {
      descriptor: { name: this.name, description: this.description, unit: 's', valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: [...this.byKey.values()].map((s) => ({
        attributes: s.attributes,
        startTime: this.start,
        endTime: end,
        value: { buckets: { boundaries: [...this.boundaries], counts: [...s.counts] }, sum: s.sum, count: s.count, min: s.min, max: s.max },
      })),
    };
  }
}

export interface TelemetryInstruments {
  /** `toolhive_mcp_requests`. */
  requests: LocalCounter;
  /** `toolhive_mcp_request_duration` (s). */
  requestDuration: LocalHistogram;
  /** `mcp.server.operation.duration` (s). */
  operationDuration: LocalHistogram;
  /** `toolhive_mcp_tool_calls`. */
  toolCalls: LocalCounter;
  /** `toolhive_mcp_active_connections` (up/down). */
  activeConnections: LocalCounter;
}

export interface Telemetry {
  /**
   * Undefined when tracing is off or no endpoint is set. `rootSpans` records sampled roots without the
   * SDK (stdio servers, see RootSpanRecorder); both export through the same exporter.
   */
  tracing: { tracer: Tracer; rootSpans: RootSpanRecorder } | undefined;
  /** The root sampling ratio of the tracer (0–1). */
  samplingRate: number;
  /** Undefined when no metrics are exported or served. */
  instruments: TelemetryInstruments | undefined;
  useLegacyAttributes: boolean;
  /** `environment.<NAME>` span attributes, read once at start. */
  environmentAttributes: Record<string, string>;
  /** `/metrics` in Prometheus text format, when `enablePrometheusMetricsPath`. */
  metricsHandler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  shutdown(): Promise<void>;
}

/**
 * The OTLP URL of a signal. The endpoint is a base URL (`/v1/traces`, `/v1/metrics` are appended to its
 * path); like ToolHive, `host:port[/path]` without a scheme is accepted and `insecure` picks http.
 */
export function otlpUrl(endpoint: string, insecure: boolean, signal: 'traces' | 'metrics'): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `${insecure ? 'http' : 'https'}://${endpoint}`;
  const url = new URL(withScheme);
  if (insecure && url.protocol === 'https:') url.protocol = 'http:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/${signal}`;
  return url.toString();
}

export function parseSamplingRate(raw: string | number | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_SAMPLING_RATE;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) return DEFAULT_SAMPLING_RATE;
  return n;
}

export function startTelemetry(
  config: TelemetryConfigJson,
  options: { serverName: string; logger: Logger; env: NodeJS.ProcessEnv },
): Telemetry {
  const { logger, env } = options;
  const endpoint = config.endpoint !== undefined && config.endpoint !== '' ? config.endpoint : undefined;
  const insecure = config.insecure === true;
  const headers = config.headers ?? {};
  const resource = resourceFromAttributes({
    ...(config.customAttributes ?? {}),
    'service.name': config.serviceName || `thv-${options.serverName}`,
    'service.version': config.serviceVersion || VERSION,
  });

  let tracerProvider: BasicTracerProvider | undefined;
  let tracing: Telemetry['tracing'];
  const rate = parseSamplingRate(config.samplingRate);
  if (endpoint !== undefined && config.tracingEnabled !== false) {
    const exporter = new OtlpTraceExporter({ url: otlpUrl(endpoint, insecure, 'traces'), headers });
    tracerProvider = new BasicTracerProvider({
      resource,
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(rate) }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    tracing = {
      tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE, VERSION),
      rootSpans: new RootSpanRecorder(exporter, resource, { name: INSTRUMENTATION_SCOPE, version: VERSION }),
    };
  }

  const requestDuration = new LocalHistogram('toolhive_mcp_request_duration', 'Duration of MCP requests', DEFAULT_BUCKETS);
  const operationDuration = new LocalHistogram('mcp.server.operation.duration', 'Duration of MCP server operations', OPERATION_BUCKETS);
  const histograms: MetricProducer = {
    async collect() {
      const end = millisToHrTime(Date.now());
      const metrics = [requestDuration.data(end), operationDuration.data(end)].filter((m): m is HistogramMetricData => m !== undefined);
      return { resourceMetrics: { resource, scopeMetrics: [{ scope: { name: INSTRUMENTATION_SCOPE, version: VERSION }, metrics }] }, errors: [] };
    },
  };
  const readers: IMetricReader[] = [];
  if (endpoint !== undefined && config.metricsEnabled !== false) {
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: otlpUrl(endpoint, insecure, 'metrics'), headers }),
        exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_METRIC_EXPORT_INTERVAL_MS,
        metricProducers: [histograms],
      }),
    );
  }
  let prometheus: PrometheusExporter | undefined;
  if (config.enablePrometheusMetricsPath === true) {
    prometheus = new PrometheusExporter({ preventServerStart: true, metricProducers: [histograms] });
    readers.push(prometheus);
  }
  const meterProvider = readers.length > 0 ? new MeterProvider({ resource, readers }) : undefined;
  const meter = meterProvider?.getMeter(INSTRUMENTATION_SCOPE, VERSION);
  let instruments: TelemetryInstruments | undefined;
  if (meter !== undefined) {
    instruments = {
          requests: new LocalCounter(),
          requestDuration,
          operationDuration,
          toolCalls: new LocalCounter(),
          activeConnections: new LocalCounter(),
    };
    const { requests, toolCalls, activeConnections } = instruments;
    meter.createObservableCounter('toolhive_mcp_requests', { description: 'Total number of MCP requests' }).addCallback((r) => requests.observe(r));
    meter.createObservableCounter('toolhive_mcp_tool_calls', { description: 'Total number of MCP tool calls' }).addCallback((r) => toolCalls.observe(r));
    meter
      .createObservableUpDownCounter('toolhive_mcp_active_connections', { description: 'Number of active MCP connections' })
      .addCallback((r) => activeConnections.observe(r));
  }

  const environmentAttributes: Record<string, string> = {};
  for (const name of config.environmentVariables ?? []) {
    const value = env[name];
    if (value !== undefined) environmentAttributes[`environment.${name}`] = value;
  }

  if (endpoint !== undefined) logger.info({ endpoint, tracing: tracerProvider !== undefined, metrics: readers.length > 0 }, 'OpenTelemetry export enabled');

  return {
    tracing,
    samplingRate: rate,
    instruments,
    useLegacyAttributes: config.useLegacyAttributes !== false,
    environmentAttributes,
    metricsHandler: prometheus !== undefined ? prometheusHandler(prometheus, logger) : undefined,
    async shutdown() {
      // The recorder's last batch goes out before the provider shuts the shared exporter down.
      await tracing?.rootSpans.shutdown().catch(() => {});
      await Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
    },
  };
}

/**
 * Serves the Prometheus reader's metrics. Names follow the Go exporter ToolHive uses: counters get
 * `_total`, and instruments in seconds get `_seconds` (the JS serializer adds only the former).
 */
function prometheusHandler(exporter: PrometheusExporter, logger: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  const serializer = new PrometheusSerializer('', false);
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Method not allowed');
      return;
    }
    exporter.collect().then(
      ({ resourceMetrics }) => {
        const body = serializer.serialize(withUnitSuffixes(resourceMetrics));
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'collecting metrics failed');
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('# failed to collect metrics\n');
      },
    );
  };
}

function withUnitSuffixes(rm: ResourceMetrics): ResourceMetrics {
  return {
    ...rm,
    scopeMetrics: rm.scopeMetrics.map((sm) => ({
      ...sm,
      metrics: sm.metrics.map((m) =>
        m.descriptor.unit === 's' && !m.descriptor.name.endsWith('_seconds')
          ? ({ ...m, descriptor: { ...m.descriptor, name: `${m.descriptor.name}_seconds` } } as typeof m)
          : m,
      ),
    })),
  };
}
