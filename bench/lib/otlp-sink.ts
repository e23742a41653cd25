/**
 * An OTLP/HTTP endpoint that accepts and discards: `POST /v1/traces` and `/v1/metrics` are read to the
 * end and answered 200 with an empty protobuf body (an empty Export*ServiceResponse, i.e. full
 * success), so the exporter under test never retries or backs off. Nothing is decoded: the benchmark
 * measures the proxy's cost of producing and sending telemetry, not a collector's. It only counts
 * exports and bytes per signal, to show that telemetry really flowed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSinkCounts {
  /** Export requests received per signal. */
  traces: number;
  metrics: number;
  other: number;
  /** Request body bytes (as sent, possibly compressed). */
  bytes: number;
}

export interface OtlpSink {
  /** Base URL for `--otel-endpoint` (the exporters append /v1/traces and /v1/metrics). */
  url: string;
  counts(): OtlpSinkCounts;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const counts: OtlpSinkCounts = { traces: 0, metrics: 0, other: 0, bytes: 0 };
  const server: Server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      counts.bytes += chunk.length;
    });
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') counts.traces++;
      else if (req.method === 'POST' && req.url === '/v1/metrics') counts.metrics++;
      else {
        counts.other++;
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' }).end();
    });
  });
  // The exporters keep connections alive; do not let an idle one hold close() up.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
