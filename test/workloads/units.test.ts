/** The small parts of the workload manager: restart budget, status files, RunConfig parsing, URLs, logs. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestartBudget, DEFAULT_RESTART_POLICY, restartPolicyFromEnv } from '../../src/workloads/restart-policy.js';
import { readStatus, setStatus, updateStatusIf, listStatusNames } from '../../src/workloads/status.js';
import { parseRunConfig } from '../../src/workloads/runconfig-store.js';
import { clientUrl } from '../../src/workloads/url.js';
import { serverLine } from '../../src/workloads/logs.js';
import { createGroup, listGroups, requireGroup } from '../../src/workloads/groups.js';
import type { RunConfig } from '../../src/config/run-config.js';

describe('restart budget', () => {
  it('waits 5, 10, 20, 40, 60, 60 … seconds and gives up after 10 failures', () => {
    const budget = new RestartBudget(DEFAULT_RESTART_POLICY);
    const waits: Array<number | undefined> = [];
    for (let i = 0; i < 11; i++) waits.push(budget.next(1000));
    assert.deepEqual(waits, [5000, 10000, 20000, 40000, 60000, 60000, 60000, 60000, 60000, 60000, undefined]);
  });

  it('starts over after a stable run of 30 s', () => {
    const budget = new RestartBudget(DEFAULT_RESTART_POLICY);
    for (let i = 0; i < 9; i++) budget.next(10);
    assert.equal(budget.next(30_000), 5000);
    assert.equal(budget.attempts, 1);
  });

  it('reads its tuning variables, ignoring nonsense', () => {
    const p = restartPolicyFromEnv({ THV_RESTART_MAX_ATTEMPTS: '2', THV_RESTART_BACKOFF_MS: 'x' });
    assert.equal(p.maxAttempts, 2);
    assert.equal(p.initialDelayMs, 5000);
  });
});

describe('status files', () => {
  let root: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'thv-status-'));
    env = { XDG_DATA_HOME: join(root, 'data'), XDG_STATE_HOME: join(root, 'state') };
  });
  after(async () => rm(root, { recursive: true, force: true }));

  it('keeps created_at, moves updated_at, and writes ToolHive\'s fields', async () => {
    const first = await setStatus('w', { status: 'starting', context: 'Starting', pid: 0 }, env);
    const second = await setStatus('w', { status: 'running', pid: 42 }, env);
    assert.equal(second.created_at, first.created_at);
    const raw = JSON.parse(await readFile(join(root, 'data/toolhive/statuses/w.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(raw).sort(), ['created_at', 'process_id', 'status', 'updated_at']);
    assert.equal(raw['process_id'], 42);
    // the pid is kept when an update does not give one
    assert.equal((await setStatus('w', { status: 'unhealthy', context: 'x' }, env)).process_id, 42);
  });

  it('updates conditionally', async () => {
    await setStatus('c', { status: 'stopping' }, env);
    assert.equal(await updateStatusIf('c', (s) => s?.status === 'running', { status: 'stopped' }, env), undefined);
    assert.equal((await readStatus('c', env))?.status, 'stopping');
  });

  it('moves a corrupt file aside and treats the status as absent', async () => {
    const dir = join(root, 'data/toolhive/statuses');
    await writeFile(join(dir, 'bad.json'), '{"status": "runn');
    assert.equal(await readStatus('bad', env), undefined);
    assert.ok((await readdir(dir)).includes('bad.json.corrupted'));
    assert.ok(!(await listStatusNames(env)).includes('bad'));
  });

  it('never tears a file under concurrent writers', async () => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => setStatus('hot', { status: i % 2 ? 'running' : 'stopped', pid: i }, env)));
    const s = await readStatus('hot', env);
    assert.ok(s !== undefined && (s.status === 'running' || s.status === 'stopped'));
    assert.deepEqual((await readdir(join(root, 'data/toolhive/statuses'))).filter((f) => f.includes('hot') && f !== 'hot.json'), []);
  });
});

describe('groups', () => {
  it('always has default, validates names, refuses duplicates', async () => {
    const root = await mkdtemp(join(tmpdir(), 'thv-groups-'));
    const env = { XDG_STATE_HOME: root };
    try {
      assert.deepEqual(await listGroups(env), ['default']);
      await createGroup('my team', env);
      await assert.rejects(createGroup('my team', env), /already exists/);
      await assert.rejects(createGroup('Bad', env), /invalid group name/);
      await assert.rejects(requireGroup('nope', env), /group 'nope' does not exist/);
      assert.deepEqual(await listGroups(env), ['default', 'my team']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('RunConfig files', () => {
  it('accepts ToolHive\'s shape, fills defaults, normalises proxy_mode', () => {
    const c = parseRunConfig(JSON.stringify({ image: 'x', name: 'n', transport: 'stdio', port: 8080 }), 'f.json');
    assert.equal(c.schema_version, 'v0.1.0');
    assert.equal(c.proxy_mode, 'streamable-http');
    assert.equal(c.host, '127.0.0.1');
    const h = parseRunConfig(JSON.stringify({ image: 'x', name: 'n', transport: 'sse', proxy_mode: 'streamable-http', host: '0.0.0.0', port: 1 }), 'f');
    assert.equal(h.proxy_mode, 'sse');
  });

  it('rejects what cannot be a workload', () => {
    assert.throws(() => parseRunConfig('nope', 'f.json'), /failed to parse run configuration f\.json/);
    assert.throws(() => parseRunConfig('{"image":"x","transport":"stdio"}', 'f'), /has no "name"/);
    assert.throws(() => parseRunConfig('{"image":"x","name":"n","transport":"carrier-pigeon"}', 'f'), /unsupported transport/);
  });

  it('builds the client URL as ToolHive does', () => {
    const base = { name: 'a b', host: '127.0.0.1', port: 9000 } as RunConfig;
    assert.equal(clientUrl({ ...base, transport: 'stdio', proxy_mode: 'streamable-http' }), 'http://127.0.0.1:9000/mcp');
    assert.equal(clientUrl({ ...base, transport: 'stdio', proxy_mode: 'sse' }), 'http://127.0.0.1:9000/sse#a%20b');
    assert.equal(clientUrl({ ...base, transport: 'sse' }), 'http://127.0.0.1:9000/sse#a%20b');
    assert.equal(clientUrl({ ...base, transport: 'streamable-http', host: '::1' }), 'http://[::1]:9000/mcp');
    assert.equal(clientUrl({ ...base, transport: 'stdio', port: 0 }), '');
  });
});

describe('server log lines', () => {
  it('picks the server\'s stderr out of the proxy log', () => {
    assert.equal(serverLine('{"level":"INFO","pid":1,"stderr":"hello","msg":"server stderr"}'), 'hello');
    assert.equal(serverLine('{"level":"INFO","msg":"MCP server proxy is running"}'), undefined);
    assert.equal(serverLine('not json "server stderr"'), undefined);
  });
});
