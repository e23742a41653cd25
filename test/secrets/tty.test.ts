import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { REPO_ROOT, THV_BIN } from '../helpers/thv.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, type TestHome } from './cli-helper.js';
import { testRegistry } from '../registry/fixtures.js';

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
});
