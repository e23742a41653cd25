/**
 * An OTLP/HTTP receiver for tests: `POST /v1/traces` and `/v1/metrics` with protobuf bodies (what the
 * OTLP/HTTP exporters send by default), decoded with the OTLP protocol messages that OpenTelemetry JS
 * generates from opentelemetry-proto (`@opentelemetry/otlp-transformer`). Keeps every request decoded,
 * with its headers.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';

const require = createRequire(import.meta.url);
interface Decoder {
  decode(buf: Uint8Array): unknown;
  toObject(msg: unknown, opts: Record<string, unknown>): Record<string, unknown>;
}
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: Decoder } }; metrics: { v1: { ExportMetricsServiceRequest: Decoder } } } } };
};
const TRACES = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const METRICS = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const TO_OBJECT = { longs: String, bytes: String, enums: String, defaults: false, arrays: true, objects: true };

export type AnyValue = { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean };
export interface KeyValue {
  key: string;
  value: AnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: string;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: string };
  resource: Record<string, string | number | boolean>;
  scope: string;
}
export interface OtlpPoint {
  metric: string;
  attributes: Record<string, string | number | boolean>;
  value?: number;
  count?: number;
  resource: Record<string, string | number | boolean>;
}

export function attrs(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) {
    const v = kv.value;
    out[kv.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? '';
  }
  return out;
}

const hex = (b64: string | undefined): string => (b64 === undefined ? '' : Buffer.from(b64, 'base64').toString('hex'));

export interface OtlpReceiver {
  url: string;
  spans: OtlpSpan[];
  /** Metric points of every export (cumulative: later exports repeat and grow the sums). */
  exports: OtlpPoint[][];
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const r: OtlpReceiver = { url: '', spans: [], exports: [], headers: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      r.headers.push(req.headers);
      try {
        if (req.url === '/v1/traces') {
          const msg = TRACES.toObject(TRACES.decode(body), TO_OBJECT) as { resourceSpans?: Array<Record<string, any>> };
          for (const rs of msg.resourceSpans ?? []) {
            const resource = attrs(rs.resource?.attributes);
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                r.spans.push({
                  traceId: hex(s.traceId),
                  spanId: hex(s.spanId),
                  parentSpanId: s.parentSpanId ? hex(s.parentSpanId) : undefined,
                  name: s.name,
                  kind: s.kind,
                  attributes: attrs(s.attributes),
                  status: s.status,
                  resource,
                  scope: ss.scope?.name ?? '',
                });
              }
            }
          }
        } else if (req.url === '/v1/metrics') {
          const msg = METRICS.toObject(METRICS.decode(body), TO_OBJECT) as { resourceMetrics?: Array<Record<string, any>> };
          const points: OtlpPoint[] = [];
          for (const rm of msg.resourceMetrics ?? []) {
            const resource = attrs(rm.resource?.attributes);
            for (const sm of rm.scopeMetrics ?? []) {
              for (const m of sm.metrics ?? []) {
                const dps = m.sum?.dataPoints ?? m.histogram?.dataPoints ?? m.gauge?.dataPoints ?? [];
                for (const dp of dps) {
                  points.push({
                    metric: m.name,
                    attributes: attrs(dp.attributes),
                    value: dp.asInt !== undefined ? Number(dp.asInt) : dp.asDouble,
                    count: dp.count !== undefined ? Number(dp.count) : undefined,
                    resource,
                  });
                }
              }
            }
          }
          r.exports.push(points);
        } else {
          res.writeHead(404).end();
          return;
        }
      } catch (err) {
        res.writeHead(400).end(String(err));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

export async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
