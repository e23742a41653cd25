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
    for (const s of receiver.spans) assert.equal(s.parentSpanId ?? '', '', 'stdio roots have no parent');
  });
});
