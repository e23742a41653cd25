import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messagesOf, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';
import { startOtlpReceiver, until, type OtlpPoint, type OtlpReceiver } from './otlp-receiver.js';

/**
 * What it must show, 1 (OTLP): `thv run --otel-*` in front of a Streamable HTTP server exports the spans
 * and metrics of a proxied session over OTLP/HTTP to a receiver that decodes OpenTelemetry's protobuf
 * messages, with ToolHive's names and attributes; the server receives W3C trace context that continues
 * the proxy's spans, and an inbound traceparent becomes the parent of the proxy's span.
 */

const HTTP_SERVER = fileURLToPath(new URL('./fixtures/http-echo-server.mjs', import.meta.url));
const SCOPE = 'github.com/stacklok/toolhive/pkg/telemetry';

function sumOf(points: OtlpPoint[], metric: string, match: Record<string, string>): number {
  return points
    .filter((p) => p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + (p.count ?? p.value ?? 0), 0);
}

describe('OpenTelemetry over OTLP/HTTP (real receiver, protobuf)', () => {
  let receiver: OtlpReceiver;
  let thv: RunningThv;
  let dir: string;
  let traceLog: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-otlp-'));
    traceLog = join(dir, 'upstream-trace.log');
    receiver = await startOtlpReceiver();
    thv = await startThv(
      [
        'run', '--runtime', 'process', '--foreground', '--name', 'otel-demo', '--transport', 'streamable-http',
        '--otel-endpoint', receiver.url, '--otel-insecure',
        '--otel-sampling-rate', '1.0',
        '--otel-headers', 'x-otlp-test=hello',
        '--otel-env-vars', 'THV_OTEL_TEST_ENV',
        '--otel-custom-attributes', 'deployment.environment=test,team=observability',
        '-e', `TRACE_LOG=${traceLog}`,
        HTTP_SERVER,
      ],
      { env: { THV_OTEL_TEST_ENV: 'from-host', OTEL_METRIC_EXPORT_INTERVAL: '300', OTEL_BSP_SCHEDULE_DELAY: '100' } },
    );
  });
  after(async () => {
    const code = await thv?.stop();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  it('exports spans, metrics and trace context for a proxied session', async () => {
    const sid = await openSession(thv.url);
    const h = { 'mcp-session-id': sid };
    for (let i = 0; i < 3; i++) {
      const res = await post(thv.url, { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}`, api_token: 'sekrit' } } }, h);
      assert.equal(res.status, 200);
      await messagesOf(res);
    }
    let res = await post(thv.url, { jsonrpc: '2.0', id: 20, method: 'tools/list' }, h);
    await res.text();
    // A caller that carries its own trace: the proxy's span continues it.
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    res = await post(thv.url, { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'echo', arguments: { message: 'traced' } } }, { ...h, traceparent: `00-${callerTrace}-${callerSpan}-01` });
    await res.text();

    const spans = await until('5 tools/call spans', () => {
      const s = receiver.spans.filter((x) => x.name === 'tools/call echo');
      return s.length >= 4 ? s : undefined;
    });
    const span = spans[0]!;
    assert.equal(span.kind, 'SPAN_KIND_SERVER');
    assert.equal(span.scope, SCOPE);
    assert.equal(span.resource['service.name'], 'thv-otel-demo');
    assert.equal(span.resource['deployment.environment'], 'test');
    assert.equal(span.resource['team'], 'observability');
    const a = span.attributes;
    assert.equal(a['mcp.method.name'], 'tools/call');
    assert.equal(a['gen_ai.tool.name'], 'echo');
    assert.equal(a['gen_ai.operation.name'], 'execute_tool');
    assert.equal(a['mcp.session.id'], sid);
    assert.equal(a['mcp.server.name'], 'otel-demo');
    assert.equal(a['rpc.system.name'], 'jsonrpc');
    assert.equal(a['jsonrpc.protocol.version'], '2.0');
    assert.equal(a['jsonrpc.request.id'], '10');
    assert.equal(a['http.request.method'], 'POST');
    assert.equal(a['url.path'], '/mcp');
    assert.equal(a['http.response.status_code'], 200);
    assert.equal(a['network.transport'], 'tcp');
    assert.equal(a['environment.THV_OTEL_TEST_ENV'], 'from-host');
    assert.match(String(a['gen_ai.tool.call.arguments']), /message=m0/);
    assert.match(String(a['gen_ai.tool.call.arguments']), /api_token=\[REDACTED\]/);
    assert.ok(!JSON.stringify(receiver.spans).includes('sekrit'), 'secret-looking arguments never reach a span');
    // Legacy names alongside (default --otel-use-legacy-attributes=true).
    assert.equal(a['mcp.method'], 'tools/call');
    assert.equal(a['mcp.tool.name'], 'echo');
    assert.equal(a['http.status_code'], 200);
    assert.equal(span.status?.code, 'STATUS_CODE_OK');
    assert.ok(receiver.spans.some((s) => s.name === 'initialize thv-test' && s.attributes['mcp.client.name'] === 'thv-test'));
    assert.ok(receiver.spans.some((s) => s.name === 'tools/list'));

    const continued = spans.find((s) => s.traceId === callerTrace);
    assert.ok(continued, 'the inbound traceparent is continued');
    assert.equal(continued.parentSpanId, callerSpan);

    // W3C trace context reached the HTTP server, naming the proxy's span as parent.
    const upstream = readFileSync(traceLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { method: string; traceparent: string | null });
    const calls = upstream.filter((u) => u.method === 'tools/call');
    assert.equal(calls.length, 4);
    for (const u of calls) assert.match(u.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    for (const s of spans) {
      assert.ok(calls.some((u) => u.traceparent === `00-${s.traceId}-${s.spanId}-01`), `the server saw the context of span ${s.spanId}`);
    }

    // Metrics (cumulative): wait for an export that has all four calls.
    const points = await until('metrics with 4 tool calls', () => {
      const last = receiver.exports.at(-1);
      return last !== undefined && sumOf(last, 'toolhive_mcp_tool_calls', { tool: 'echo' }) >= 4 ? last : undefined;
    });
    assert.equal(sumOf(points, 'toolhive_mcp_tool_calls', { server: 'otel-demo', tool: 'echo', status: 'success' }), 4);
    assert.equal(sumOf(points, 'toolhive_mcp_requests', { mcp_method: 'tools/call', mcp_resource_id: 'echo', status: 'success', status_code: '200', method: 'POST', server: 'otel-demo', transport: 'streamable-http' }), 4);
    assert.equal(sumOf(points, 'toolhive_mcp_requests', { mcp_method: 'initialize' }), 1);
    assert.equal(sumOf(points, 'toolhive_mcp_request_duration', { mcp_method: 'tools/call' }), 4, 'histogram count');
    assert.equal(sumOf(points, 'mcp.server.operation.duration', { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' }), 4);
    assert.ok(points.some((p) => p.metric === 'toolhive_mcp_active_connections'));
    assert.equal(points[0]!.resource['service.name'], 'thv-otel-demo');
    assert.ok(receiver.headers.every((hd) => hd['x-otlp-test'] === 'hello'), '--otel-headers go with every export');
    assert.ok(existsSync(traceLog));
    // Without --otel-enable-prometheus-metrics-path, /metrics is a 404 page (not forwarded to the server).
    const m = await fetch(`${thv.base}/metrics`);
    assert.equal(m.status, 404);
    await m.text();
  });
});
