/**
 * Must-show 2: a killed server is restarted (or the workload ends in `error` once the restart budget is
 * spent); a killed proxy is reported truthfully by `thv list`, and `thv start` recovers it.
 * Restart delays are shortened through THV_RESTART_BACKOFF_MS / THV_HEALTH_INTERVAL_MS.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ECHO_SERVER } from '../helpers/thv.js';
import { callTool, CRASH, HTTP_ECHO, isAlive, listJson, sandbox, urlFrom, waitFor, type Sandbox } from './helpers.js';

const FAST_RESTARTS = { THV_RESTART_BACKOFF_MS: '100', THV_RESTART_MAX_BACKOFF_MS: '400', THV_HEALTH_INTERVAL_MS: '200' };

describe('workload recovery', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await sandbox(FAST_RESTARTS);
  });
  after(async () => sb.cleanup());

  it('restarts the proxy and its HTTP server on the same URL when the server is killed', async () => {
    const url = urlFrom((await sb.ok(['run', '--name', 'web', '--transport', 'streamable-http', HTTP_ECHO])).stdout);
    const first = Number(await callTool(url, 'whoami'));
    assert.ok(isAlive(first));
    process.kill(first, 'SIGKILL');
    const second = await waitFor(
      'a new server answering on the same URL',
      async () => {
        const pid = Number(await callTool(url, 'whoami').catch(() => '0'));
        return pid !== 0 && pid !== first ? pid : undefined;
      },
      30_000,
    );
    assert.notEqual(second, first);
    const [w] = await listJson(sb);
    assert.equal(w?.status, 'running');
    assert.equal(w?.url, url);
    const log = await readFile(join(sb.root, 'data', 'toolhive', 'logs', 'web.log'), 'utf8');
    assert.match(log, /Server exited, restarting \(attempt 1 of 10\)/);
    await sb.ok(['rm', 'web']);
    assert.equal(isAlive(second), false);
  });

  it('replaces a killed stdio server process and keeps serving', async () => {
    const url = urlFrom((await sb.ok(['run', '--name', 'stdio', ECHO_SERVER])).stdout);
    const first = Number(await callTool(url, 'whoami'));
    // A session's server process dies under a client.
    process.kill(first, 'SIGKILL');
    await waitFor('the status to note the replacement', async () => {
      const [w] = await listJson(sb);
      return w?.status === 'running' && /replaced/.test(w.status_context) ? w : undefined;
    });
    const second = Number(await callTool(url, 'whoami'));
    assert.ok(second > 0 && second !== first);
    await sb.ok(['rm', 'stdio']);
  });

  it('ends in error after the retry budget when the server cannot start', async () => {
    const sb2 = await sandbox({ ...FAST_RESTARTS, THV_RESTART_MAX_ATTEMPTS: '2' });
    try {
      const run = await sb2.thv(['run', '--name', 'crash', CRASH]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /Failed to restart after server exit/);
      const [w] = await listJson(sb2);
      assert.equal(w?.status, 'error');
      assert.match(w!.status_context, /Failed to restart after server exit/);
      assert.equal(w?.process_id, 0);
      // A workload in error can be re-created under its name (ToolHive's rule).
      const retry = await sb2.thv(['run', '--name', 'crash', CRASH]);
      assert.doesNotMatch(retry.stderr, /already exists/);
    } finally {
      await sb2.cleanup();
    }
  });

  it('reports a killed proxy as unhealthy (not a stale running) and recovers with start', async () => {
    const url = urlFrom((await sb.ok(['run', '--name', 'victim', '--transport', 'streamable-http', HTTP_ECHO])).stdout);
    const server = Number(await callTool(url, 'whoami'));
    const [w] = await listJson(sb);
    process.kill(w!.process_id, 'SIGKILL');
    await waitFor('the proxy to die', async () => !isAlive(w!.process_id));

    assert.deepEqual(await listJson(sb, []), [], 'a dead workload is not listed as running');
    const [all] = await listJson(sb);
    assert.equal(all?.status, 'unhealthy');
    assert.match(all!.status_context, /proxy process not running/);
    // the correction is recorded in the status file, not just displayed
    assert.equal((await sb.statusFile('victim'))?.['status'], 'unhealthy');

    // start clears the orphaned server (it held the port) and serves again on the same URL
    const start = await sb.ok(['start', 'victim']);
    assert.equal(urlFrom(start.stdout), url);
    assert.equal(isAlive(server), false);
    const pid = Number(await callTool(url, 'whoami'));
    assert.ok(pid > 0 && pid !== server);
    await sb.ok(['rm', 'victim']);
  });
});
