import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { REPO_ROOT, THV_BIN } from '../helpers/thv.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, type TestHome } from './cli-helper.js';
import { testRegistry } from '../registry/fixtures.js';
import { callTool, HTTP_ECHO, urlFrom } from '../workloads/helpers.js';

/**
 * Runs thv on a real pseudo-terminal (util-linux `script`) and answers prompts as they appear: each
 * answer is written only once its prompt is on screen, so it is typed into raw mode, as a person would.
 */
function onTerminal(home: TestHome, args: string[], answers: Array<[RegExp, string]>, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; screen: string }> {
  const cmd = [process.execPath, THV_BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: REPO_ROOT, env: { ...process.env, ...home.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    let next = 0;
    let answered = 0;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no progress on the terminal:\n${screen}`));
    }, 60_000); // generous: the machine is shared and npx starts slowly under load
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString();
      while (next < answers.length && answers[next]![0].test(screen.slice(answered))) {
        answered = screen.length;
        child.stdin.write(`${answers[next]![1]}\r`);
        next++;
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

describe('prompts on a terminal', () => {
  let home: TestHome;
  before(async () => {
    home = makeHome('thv-tty-');
    assert.equal((await home.thv(['secret', 'provider', 'encrypted'])).code, 0);
  });
  after(() => home.cleanup());

  it('secret set asks for the value and a new store password, echoing neither', async () => {
    const value = 'typed-secret-31f5';
    const password = 'typed-password-8c2e';
    const r = await onTerminal(home, ['secret', 'set', 'typed'], [
      [/Enter secret value \(input will be hidden\): /, value],
      [/Choose a password: /, password],
      [/Repeat the password: /, password],
    ]);
    assert.equal(r.code, 0, r.screen);
    assert.match(r.screen, /Secret typed set successfully/);
    assert.doesNotMatch(r.screen, new RegExp(`${value}|${password}`));
    const get = await home.thv(['secret', 'get', 'typed'], { env: { TOOLHIVE_SECRETS_PASSWORD: password } });
    assert.equal(get.stdout, `Secret typed: ${value}\n`);
  });

  it('an existing store asks for its password once; a wrong one is refused', async () => {
    const ok = await onTerminal(home, ['secret', 'list'], [[/Enter the password of your thv secrets store: /, 'typed-password-8c2e']]);
    assert.equal(ok.code, 0, ok.screen);
    assert.match(ok.screen, /- typed/);
    const bad = await onTerminal(home, ['secret', 'list'], [[/Enter the password of your thv secrets store: /, 'nope']]);
    assert.equal(bad.code, 2);
    assert.match(bad.screen, /wrong password/);
  });

  it('thv run asks for a required registry variable; a secret answer goes to the store, not to disk in clear', async () => {
    const file = join(home.dir, 'registry.json');
    writeFileSync(file, JSON.stringify(testRegistry()));
    assert.equal((await home.thv(['config', 'set-registry', file])).code, 0);
    const key = 'prompted-key-6e0b';
    const r = await onTerminal(
      home,
      ['run', '--runtime', 'process', '--foreground', 'everything-keyed'],
      [
        [/dev\.thv\.test\/everything-keyed needs TEST_API_KEY \(API key for the test\): /, key],
        [/is available at http:\/\/127\.0\.0\.1:\d+\/mcp/, '\x03'],
      ],
      { TOOLHIVE_SECRETS_PASSWORD: 'typed-password-8c2e' },
    );
    assert.match(r.screen, /MCP server everything-keyed is available at/);
    assert.doesNotMatch(r.screen, new RegExp(key));
    const list = await home.thv(['secret', 'list'], { env: { TOOLHIVE_SECRETS_PASSWORD: 'typed-password-8c2e' } });
    assert.match(list.stdout, /- registry-user-test_api_key/);
    for (const f of home.files()) assert.equal(f.content.includes(Buffer.from(key)), false, `${key} in ${f.path}`);
  });

  it('a detached run asks for the store password once; its proxy gets it in memory and resolves the secret, also on thv start', async () => {
    const password = 'typed-password-8c2e';
    const value = 'detached-secret-5a91';
    const set = await home.thv(['secret', 'set', 'det-token'], { input: value, env: { TOOLHIVE_SECRETS_PASSWORD: password } });
    assert.equal(set.code, 0, set.stderr);
    const askPassword: Array<[RegExp, string]> = [[/Enter the password of your thv secrets store: /, password]];
    try {
      const run = await onTerminal(
        home,
        ['run', '--runtime', 'process', '--name', 'det', '--transport', 'streamable-http', '--secret', 'det-token,target=API_TOKEN', HTTP_ECHO],
        askPassword,
      );
      assert.equal(run.code, 0, run.screen);
      const url = urlFrom(run.screen);
      assert.equal(await callTool(url, 'env', { name: 'API_TOKEN' }), value);
      // The password reached the proxy, not the MCP server.
      assert.equal(await callTool(url, 'env', { name: 'TOOLHIVE_SECRETS_PASSWORD' }), '');

      assert.equal((await home.thv(['stop', 'det'])).code, 0);
      const start = await onTerminal(home, ['start', 'det'], askPassword);
      assert.equal(start.code, 0, start.screen);
      assert.equal(urlFrom(start.screen), url);
      assert.equal(await callTool(url, 'env', { name: 'API_TOKEN' }), value);

      // restart checks the password before stopping anything: a wrong one leaves the workload serving
      const wrong = await onTerminal(home, ['restart', 'det'], [[/Enter the password of your thv secrets store: /, 'not-the-password']]);
      assert.notEqual(wrong.code, 0, wrong.screen);
      assert.match(wrong.screen, /wrong password/);
      assert.equal(await callTool(url, 'env', { name: 'API_TOKEN' }), value);
      // …and the right one is asked once, though both the stop and the start need it
      const restart = await onTerminal(home, ['restart', 'det'], askPassword);
      assert.equal(restart.code, 0, restart.screen);
      assert.equal(restart.screen.match(/Enter the password/g)?.length, 1, restart.screen);
      assert.equal(await callTool(url, 'env', { name: 'API_TOKEN' }), value);

      for (const screen of [run.screen, start.screen, restart.screen]) assert.doesNotMatch(screen, new RegExp(`${value}|${password}`));
      // Neither the value nor the password is on disk in clear: not in the RunConfig, status, or proxy log.
      for (const f of home.files()) {
        assert.equal(f.content.includes(Buffer.from(value)), false, `${value} in ${f.path}`);
        assert.equal(f.content.includes(Buffer.from(password)), false, `the password in ${f.path}`);
      }
    } finally {
      await home.thv(['rm', 'det']);
    }
  });
});
