/**
 * The OTLP/HTTP protobuf trace exporter: OpenTelemetry's exporter base and HTTP transport (endpoint,
 * headers, compression, timeouts, retries, `OTEL_EXPORTER_OTLP_*` settings), with the request bodies
 * written by encodeTraceRequest instead of the transformer and protobufjs (see otlp-trace-encoding.ts).
 */
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, type IExportTraceServiceResponse, type ISerializer } from '@opentelemetry/otlp-transformer';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { encodeTraceRequest, type EncodableSpan } from './otlp-trace-encoding.js';

const serializer: ISerializer<EncodableSpan[], IExportTraceServiceResponse> = {
  serializeRequest: (spans) => encodeTraceRequest(spans),
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/** Exports the SDK's spans (as a SpanExporter) and spans recorded without the SDK (RootSpanRecorder). */
export class OtlpTraceExporter extends OTLPExporterBase<EncodableSpan[]> implements SpanExporter {
  constructor(options: { url: string; headers: Record<string, string> }) {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions({ url: options.url, headers: options.headers }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
        serializer,
      ),
    );
  }
}
