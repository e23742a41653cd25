/**
 * A newcomer's session (issue 3, must-show 1) and export → run --from-config (must-show 5), through the
 * real CLI on the process runtime with the official MCP SDK client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { ECHO_SERVER, THV_BIN, REPO_ROOT } from '../helpers/thv.js';
import { callTool, HTTP_ECHO, isAlive, listJson, sandbox, urlFrom, waitFor, type Sandbox } from './helpers.js';

describe('workload lifecycle: run → list → call → stop → start → rm', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await sandbox();
  });
  after(async () => sb.cleanup());

  it('goes through the whole lifecycle and leaves no files behind', async () => {
    const run = await sb.ok(['run', '--name', 'echo', '--label', 'team=blue', ECHO_SERVER]);
    const url = urlFrom(run.stdout);
    assert.match(run.stdout, /^MCP server echo is available at http:\/\/127\.0\.0\.1:\d+\/mcp\n$/);

    // list shows it running, with its URL
    const text = await sb.ok(['list']);
    assert.match(text.stdout, /^NAME\s+PACKAGE\s+STATUS\s+URL\s+PORT\s+GROUP\s+CREATED\n/);
    assert.match(text.stdout, new RegExp(`echo\\s+\\S+echo-server\\.mjs\\s+running\\s+${url.replace(/[.]/g, '\\.')}`));
    const [listed] = await listJson(sb, []);
    assert.equal(listed?.name, 'echo');
    assert.equal(listed?.status, 'running');
    assert.equal(listed?.url, url);
    assert.equal(listed?.group, 'default');
    assert.deepEqual(listed?.labels, { team: 'blue' });
    const proxyPid = listed!.process_id;
    assert.ok(isAlive(proxyPid));

    // an MCP client calls a tool
    assert.equal(await callTool(url, 'echo', { message: 'hello' }), 'hello');

    // a second run under the same name is refused
    const dup = await sb.thv(['run', '--name', 'echo', ECHO_SERVER]);
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /already exists/);

    // stop: not in the default list, stopped in --all, proxy gone
    await sb.ok(['stop', 'echo']);
    assert.deepEqual(await listJson(sb, []), []);
    const [stopped] = await listJson(sb);
    assert.equal(stopped?.status, 'stopped');
    assert.equal(isAlive(proxyPid), false);
    const again = await sb.ok(['stop', 'echo']);
    assert.match(again.stderr, /not running/);

    // start: same URL, works again
    const start = await sb.ok(['start', 'echo']);
    assert.equal(urlFrom(start.stdout), url);
    assert.equal(await callTool(url, 'echo', { message: 'again' }), 'again');
    const noop = await sb.ok(['start', 'echo']);
    assert.match(noop.stdout, /already running/);

    // restart keeps the URL and replaces the proxy
    const before = (await listJson(sb))[0]!.process_id;
    const restart = await sb.ok(['restart', 'echo']);
    assert.equal(urlFrom(restart.stdout), url);
    const afterRestart = (await listJson(sb))[0]!;
    assert.equal(afterRestart.status, 'running');
    assert.notEqual(afterRestart.process_id, before);

    // status and logs
    const status = await sb.ok(['status', 'echo', '--output', 'json']);
    assert.equal((JSON.parse(status.stdout) as { status: string }).status, 'running');
    const serverLogs = await sb.ok(['logs', 'echo']);
    assert.match(serverLogs.stdout, /echo-server \d+ ready/);
    const proxyLogs = await sb.ok(['logs', 'echo', '--proxy']);
    assert.match(proxyLogs.stdout, /"msg":"MCP server proxy is running"/);

    // rm: gone, and nothing of it left on disk
    const lastPid = afterRestart.process_id;
    await sb.ok(['rm', 'echo']);
    assert.deepEqual(await listJson(sb), []);
    assert.equal(isAlive(lastPid), false);
    const leftovers = (await sb.files()).filter((f) => f !== 'state/toolhive/groups/default.json');
    assert.deepEqual(leftovers, []);
  });

  it('follows the log with --follow', async () => {
    await sb.ok(['run', '--name', 'follow', ECHO_SERVER]);
    const child = spawn(process.execPath, [THV_BIN, 'logs', 'follow', '--follow'], { cwd: REPO_ROOT, env: { ...process.env, ...sb.env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor('first lines', async () => /ready/.test(out));
      const seen = out.length;
      await sb.ok(['restart', 'follow']); // new server processes write new lines
      await waitFor('appended lines', async () => out.length > seen && /ready/.test(out.slice(seen)));
    } finally {
      child.kill('SIGINT');
      await new Promise((r) => child.once('close', r));
      await sb.ok(['rm', 'follow']);
    }
  });
});

describe('groups and labels', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await sandbox();
  });
  after(async () => sb.cleanup());

  it('runs into a group, filters by group and label, and moves workloads to default when the group goes', async () => {
    const missing = await sb.thv(['run', '--name', 'g1', '--group', 'team', ECHO_SERVER]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /group 'team' does not exist/);
    await sb.ok(['group', 'create', 'team']);
    const dup = await sb.thv(['group', 'create', 'team']);
    assert.match(dup.stderr, /already exists/);
    assert.deepEqual((await sb.ok(['group', 'list'])).stdout.trim().split('\n'), ['NAME', 'default', 'team']);

    await sb.ok(['run', '--name', 'g1', '--group', 'team', '-l', 'tier=gold', ECHO_SERVER]);
    await sb.ok(['run', '--name', 'g2', ECHO_SERVER]);
    assert.deepEqual((await listJson(sb, ['--group', 'team'])).map((w) => w.name), ['g1']);
    assert.deepEqual((await listJson(sb, ['--label', 'tier=gold'])).map((w) => w.name), ['g1']);
    assert.deepEqual((await listJson(sb, [])).map((w) => w.name), ['g1', 'g2']);

    // stop --group, then stop --all
    await sb.ok(['stop', '--group', 'team']);
    assert.deepEqual((await listJson(sb, [])).map((w) => w.name), ['g2']);
    await sb.ok(['stop', '--all']);
    assert.deepEqual(await listJson(sb, []), []);

    const del = await sb.ok(['group', 'rm', 'team']);
    assert.match(del.stdout, /moved 1 workload/);
    assert.equal((await listJson(sb)).find((w) => w.name === 'g1')?.group, 'default');
    const noDefault = await sb.thv(['group', 'rm', 'default']);
    assert.notEqual(noDefault.code, 0);
    await sb.ok(['rm', '--all']);
    assert.deepEqual(await listJson(sb), []);
  });
});

describe('export and run --from-config', () => {
  const SECRET = 's3cr3t-value-that-must-not-leak';
  let sb: Sandbox;
  before(async () => {
    sb = await sandbox({ TOOLHIVE_SECRETS_PROVIDER: 'encrypted', TOOLHIVE_SECRETS_PASSWORD: 'correct horse battery staple' });
  });
  after(async () => sb.cleanup());

  it('reproduces the workload; secret values are never written outside the encrypted store', async () => {
    // store the secret in the encrypted store (value on stdin)
    const set = spawn(process.execPath, [THV_BIN, 'secret', 'set', 'api-token'], { cwd: REPO_ROOT, env: { ...process.env, ...sb.env } });
    let setErr = '';
    set.stderr.on('data', (d: Buffer) => (setErr += d.toString()));
    set.stdin.end(SECRET);
    const setCode = await new Promise<number | null>((r) => set.once('close', r));
    assert.equal(setCode, 0, setErr);

    const run = await sb.ok([
      // --debug: the proxy logs at its most talkative level, and still must not carry the value.
      'run', '--debug', '--name', 'exp', '--transport', 'streamable-http', '--secret', 'api-token,target=API_TOKEN',
      '-e', 'PLAIN=visible', '--tools', 'env', HTTP_ECHO,
    ]);
    const outputs = [run.stdout, run.stderr];
    const url = urlFrom(run.stdout);
    assert.equal(await callTool(url, 'env', { name: 'API_TOKEN' }), SECRET);

    const exported = join(sb.root, 'out', 'exp.json');
    const exp = await sb.ok(['export', 'exp', exported]);
    assert.match(exp.stdout, /Successfully exported run configuration for 'exp'/);
    const json = JSON.parse(await readFile(exported, 'utf8')) as Record<string, unknown>;
    assert.equal(json['name'], 'exp');
    assert.equal(json['schema_version'], 'v0.1.0');
    assert.equal(json['transport'], 'streamable-http');
    assert.deepEqual(json['secrets'], ['api-token,target=API_TOKEN']);
    assert.equal((json['env_vars'] as Record<string, string>)['PLAIN'], 'visible');

    const bad = await sb.thv(['export', 'exp', exported, '--format', 'invalid']);
    assert.match(bad.stderr, /invalid format/);
    const unknown = await sb.thv(['export', 'nope', exported]);
    assert.match(unknown.stderr, /failed to load/);

    // --from-config refuses other configuration flags, as ToolHive does
    const mixed = await sb.thv(['run', '--from-config', exported, '--name', 'other']);
    assert.equal(mixed.code, 2);
    assert.match(mixed.stderr, /--from-config cannot be used with other configuration flags: --name/);

    // remove the original, then run the export: same name, URL, tools filter, env and secret
    await sb.ok(['rm', 'exp']);
    const rerun = await sb.ok(['run', '--from-config', exported]);
    outputs.push(rerun.stdout, rerun.stderr, exp.stdout, exp.stderr);
    assert.equal(urlFrom(rerun.stdout), url);
    assert.equal(await callTool(url, 'env', { name: 'API_TOKEN' }), SECRET);
    assert.equal(await callTool(url, 'env', { name: 'PLAIN' }), 'visible');
    const [listed] = await listJson(sb);
    assert.equal(listed?.name, 'exp');
    assert.equal(listed?.status, 'running');

    // no file except the encrypted store holds the value (the whole XDG tree: RunConfigs, statuses, the
    // export, the proxy and server logs), nor the store's password; no command printed either
    const password = sb.env['TOOLHIVE_SECRETS_PASSWORD']!;
    const proxyLog = await sb.ok(['logs', 'exp', '--proxy']);
    outputs.push(proxyLog.stdout, (await sb.ok(['logs', 'exp'])).stdout);
    const files = await sb.files();
    assert.ok(files.includes('data/toolhive/logs/exp.log') && files.includes('out/exp.json'), files.join(', '));
    for (const file of files) {
      const content = await readFile(join(sb.root, file), 'utf8');
      assert.ok(!content.includes(password), `${file} contains the store password`);
      if (file.endsWith('secrets_encrypted')) continue;
      assert.ok(!content.includes(SECRET), `${file} contains the secret value`);
    }
    for (const out of outputs) assert.ok(!out.includes(SECRET) && !out.includes(password), `a command printed a secret: ${out}`);
    await sb.ok(['rm', 'exp']);
  });

  it('serves --from-config --foreground in this process without deleting the workload on exit', async () => {
    const file = join(sb.root, 'fg.json');
    await sb.ok(['run', '--name', 'fg', ECHO_SERVER]);
    await sb.ok(['export', 'fg', file]);
    await sb.ok(['rm', 'fg']);
    const child = spawn(process.execPath, [THV_BIN, 'run', '--from-config', file, '--foreground'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...sb.env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const url = await waitFor('the URL', async () => /available at (\S+)/.exec(out)?.[1]);
    assert.equal(await callTool(url, 'echo', { message: 'fg' }), 'fg');
    assert.equal((await listJson(sb))[0]?.status, 'running');
    child.kill('SIGINT');
    assert.equal(await new Promise((r) => child.once('close', r)), 0);
    const [w] = await listJson(sb);
    assert.equal(w?.name, 'fg');
    assert.equal(w?.status, 'stopped');
    await sb.ok(['rm', 'fg']);
  });
});
