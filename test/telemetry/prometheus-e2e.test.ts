import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/proxy/net.js';
import { ECHO_SERVER, messagesOf, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';

/**
 * What it must show, 1 (Prometheus): `--otel-enable-prometheus-metrics-path` serves `/metrics` on the
 * proxy port with ToolHive's metric names; a real Prometheus server (Debian's package, started here on
 * a free port with its own data directory) scrapes it, and its query API returns the number of calls.
 */

function requirePrometheus(): string {
  const r = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error('prometheus is not installed: run scripts/services.sh (Debian package "prometheus")');
  return 'prometheus';
}

describe('Prometheus scrapes /metrics on the proxy port', () => {
  let thv: RunningThv;
  let prom: ChildProcess | undefined;
  let promLog = '';
  let promUrl: string;
  let dir: string;
  before(async () => {
    const bin = requirePrometheus();
    dir = mkdtempSync(join(tmpdir(), 'thv-prom-'));
    thv = await startThv(['run', '--runtime', 'process', '--foreground', '--name', 'scraped', '--transport', 'stdio', '--otel-enable-prometheus-metrics-path', ECHO_SERVER]);
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: thv\n    metrics_path: /metrics\n    static_configs:\n      - targets: ['127.0.0.1:${thv.port}']\n`,
    );
    prom = spawn(bin, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    prom.stderr!.on('data', (d: Buffer) => (promLog += d.toString()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (prom.exitCode !== null) throw new Error(`prometheus exited with ${prom.exitCode}: ${promLog}`);
      const ok = await fetch(`${promUrl}/-/ready`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`prometheus did not become ready: ${promLog}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    if (prom && prom.exitCode === null) {
      const exited = new Promise((r) => prom!.once('exit', r));
      prom.kill('SIGTERM');
      await exited;
    }
    const code = await thv?.stop();
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  async function query(q: string): Promise<number | undefined> {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { status: string; data: { result: Array<{ value: [number, string] }> } };
    if (body.status !== 'success' || body.data.result.length === 0) return undefined;
    return Number(body.data.result[0]!.value[1]);
  }

  it('serves the reference metric names, and Prometheus counts the calls', async () => {
    const sid = await openSession(thv.url);
    const CALLS = 7;
    for (let i = 0; i < CALLS; i++) {
      const res = await post(thv.url, { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'echo', arguments: { message: `n${i}` } } }, { 'mcp-session-id': sid });
      assert.equal(res.status, 200);
      await messagesOf(res);
    }

    const text = await (await fetch(`${thv.base}/metrics`)).text();
    for (const name of [
      'toolhive_mcp_requests_total',
      'toolhive_mcp_request_duration_seconds_bucket',
      'toolhive_mcp_tool_calls_total',
      'toolhive_mcp_active_connections',
      'mcp_server_operation_duration_seconds_bucket',
    ]) {
      assert.match(text, new RegExp(`^${name}\\{`, 'm'), `${name} is exposed`);
    }
    assert.match(text, new RegExp(`^toolhive_mcp_tool_calls_total\\{[^}]*tool="echo"[^}]*\\} ${CALLS}\\b`, 'm'));

    const deadline = Date.now() + 20_000;
    let value: number | undefined;
    for (;;) {
      value = await query('sum(toolhive_mcp_tool_calls_total{tool="echo",server="scraped",status="success"})');
      if (value === CALLS || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(value, CALLS, `Prometheus query API returns the number of calls (log: ${promLog})`);
    assert.equal(await query('sum(toolhive_mcp_requests_total{mcp_method="tools/call",status_code="200"})'), CALLS);
    assert.equal(await query('sum(toolhive_mcp_request_duration_seconds_count{mcp_method="tools/call"})'), CALLS);
    assert.equal(await query('up{job="thv"}'), 1);
  });
});
