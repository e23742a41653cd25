import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ECHO_SERVER, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

/**
 * `--otel-sampling-rate` in front of a stdio server: the proxy decides the sampling of root spans itself
 * (to skip the SDK for the requests it drops), and the SDK must then record what it was handed. A bug
 * once sampled those a second time at the same ratio (0.1 became 0.01); this holds the exported share
 * of 800 calls at rate 0.25 to 200 ± 60 (more than 4 standard deviations of the binomial).
 */
describe('span sampling in front of a stdio server', () => {
  let receiver: OtlpReceiver;
  let thv: RunningThv;
  before(async () => {
    receiver = await startOtlpReceiver();
    thv = await startThv(
      [
        'run', '--runtime', 'process', '--foreground', '--name', 'sampled', '--transport', 'stdio',
        '--otel-endpoint', receiver.url, '--otel-insecure', '--otel-sampling-rate', '0.25',
        '--otel-tracing-enabled', '--otel-metrics-enabled=false',
        ECHO_SERVER,
      ],
      { env: { OTEL_BSP_SCHEDULE_DELAY: '100' } },
    );
  });
  after(async () => {
    await thv?.stop();
    await receiver?.close();
  });

  it('exports the configured share of requests', async () => {
    const sid = await openSession(thv.url);
    const calls = 800;
    for (let i = 0; i < calls; i++) {
      const res = await post(thv.url, { jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, { 'mcp-session-id': sid });
      assert.equal(res.status, 200);
      await res.text();
    }
    // Stopping flushes every span that was recorded.
    assert.equal(await thv.stop(), 0);
    const sampled = receiver.spans.filter((s) => s.name === 'tools/call echo').length;
    assert.ok(sampled >= 140 && sampled <= 260, `${sampled} of ${calls} calls were exported at rate 0.25`);
    const ids = new Set<string>();
    for (const s of receiver.spans) {
      // What a stdio root span carries (recorded by the stage, exported by OpenTelemetry's exporter).
      assert.equal(s.parentSpanId ?? '', '', 'stdio roots have no parent');
      assert.match(s.traceId, /^[0-9a-f]{32}$/);
      assert.match(s.spanId, /^[0-9a-f]{16}$/);
      ids.add(s.traceId);
      assert.equal(s.kind, 'SPAN_KIND_SERVER');
      assert.equal(s.status?.code, 'STATUS_CODE_OK');
      assert.equal(s.scope, 'github.com/stacklok/toolhive/pkg/telemetry');
      assert.equal(s.resource['service.name'], 'thv-sampled');
      assert.equal(s.attributes['network.transport'], 'pipe');
      // initialize and notifications/initialized may be sampled too.
      if (s.name !== 'tools/call echo') continue;
      assert.equal(s.attributes['mcp.method.name'], 'tools/call');
      assert.equal(s.attributes['gen_ai.tool.name'], 'echo');
      assert.equal(s.attributes['mcp.tool.name'], 'echo', 'legacy names by default');
      assert.equal(s.attributes['http.response.status_code'], 200);
      assert.equal(s.attributes['mcp.session.id'], sid);
    }
    assert.equal(ids.size, receiver.spans.length, 'every root has its own trace id');
  });
});
