import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ECHO_SERVER, runThv, startThv } from '../helpers/thv.js';

/** `thv config otel set-|get-|unset-*` write config.yaml's `otel:` section, and `thv run` uses it. */
describe('thv config otel', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'thv-config-otel-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') };
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  const config = () => parse(readFileSync(join(home, 'config', 'toolhive', 'config.yaml'), 'utf8')) as { otel?: Record<string, unknown> };

  it('sets, shows and removes values in ToolHive keys', async () => {
    for (const args of [
      ['set-endpoint', 'collector.example:4318'],
      ['set-sampling-rate', '0.25'],
      ['set-env-vars', 'USER,HOME'],
      ['set-insecure', 'true'],
      ['set-metrics-enabled', 'false'],
    ]) {
      const r = await runThv(['config', 'otel', ...args], { env });
      assert.equal(r.code, 0, r.stderr);
    }
    assert.deepEqual(config().otel, { endpoint: 'collector.example:4318', 'sampling-rate': 0.25, 'env-vars': ['USER', 'HOME'], insecure: true, 'metrics-enabled': false });
    const got = await runThv(['config', 'otel', 'get-sampling-rate'], { env });
    assert.match(got.stdout, /0\.25/);
    const bad = await runThv(['config', 'otel', 'set-sampling-rate', '1.5'], { env });
    assert.equal(bad.code, 2);
    for (const key of ['endpoint', 'sampling-rate', 'env-vars', 'insecure', 'metrics-enabled']) {
      assert.equal((await runThv(['config', 'otel', `unset-${key}`], { env })).code, 0);
    }
    assert.equal(config().otel, undefined);
    assert.match((await runThv(['config', 'otel', 'get-endpoint'], { env })).stdout, /No OpenTelemetry endpoint/);
  });

  it('thv run takes its telemetry defaults from config.yaml', async () => {
    assert.equal((await runThv(['config', 'otel', 'set-enable-prometheus-metrics-path', 'true'], { env })).code, 0);
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', '--transport', 'stdio', '--name', 'from-config', ECHO_SERVER], { env });
    try {
      const res = await fetch(`${thv.base}/metrics`);
      assert.equal(res.status, 200, '/metrics is served because config.yaml enables it');
      await res.text();
    } finally {
      assert.equal(await thv.stop(), 0);
    }
    // An explicit flag wins over config.yaml.
    const off = await startThv(['run', '--runtime', 'process', '--foreground', '--transport', 'stdio', '--name', 'flag-wins', '--otel-enable-prometheus-metrics-path=false', ECHO_SERVER], { env });
    try {
      const res = await fetch(`${off.base}/metrics`);
      assert.equal(res.status, 404);
      await res.text();
    } finally {
      assert.equal(await off.stop(), 0);
    }
  });
});
