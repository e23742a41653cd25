import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, type TestHome } from './cli-helper.js';

const VALUE = 'sk-test-7f3a9c1e-PLAINTEXT-MARKER';

describe('thv secret with the encrypted provider (real CLI)', () => {
  let home: TestHome;
  const pw = { TOOLHIVE_SECRETS_PASSWORD: 'test password 1' };
  before(() => {
    home = makeHome('thv-secret-');
  });
  after(() => home.cleanup());

  it('refuses to work before a provider is chosen, and says how to choose one', async () => {
    const r = await home.thv(['secret', 'list']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /secrets provider not configured/);
    assert.match(r.stderr, /thv secret provider encrypted/);
  });

  it('thv secret provider encrypted writes ToolHive\'s config.yaml keys', async () => {
    const r = await home.thv(['secret', 'provider', 'encrypted']);
    assert.equal(r.code, 0, r.stderr);
    const config = readFileSync(join(home.dir, 'config/toolhive/config.yaml'), 'utf8');
    assert.match(config, /provider_type: encrypted/);
    assert.match(config, /setup_completed: true/);
  });

  it('set (value from stdin) → get → list → delete', async () => {
    const set = await home.thv(['secret', 'set', 'api-key'], { input: `${VALUE}\n`, env: pw });
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'Secret api-key set successfully\n');
    assert.doesNotMatch(set.stdout + set.stderr, new RegExp(VALUE));

    const get = await home.thv(['secret', 'get', 'api-key'], { env: pw });
    assert.equal(get.code, 0, get.stderr);
    assert.equal(get.stdout, `Secret api-key: ${VALUE}\n`); // one trailing newline of the input removed

    await home.thv(['secret', 'set', 'other'], { input: 'x', env: pw });
    const list = await home.thv(['secret', 'list'], { env: pw });
    assert.equal(list.stdout, 'Available secrets:\n  - api-key\n  - other\n');

    const del = await home.thv(['secret', 'delete', 'other'], { env: pw });
    assert.equal(del.code, 0, del.stderr);
    const gone = await home.thv(['secret', 'get', 'other'], { env: pw });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /secret not found: other/);
  });

  it('the file is 0600, in ToolHive\'s location, and holds no plaintext', () => {
    const path = join(home.dir, 'data/toolhive/secrets_encrypted');
    assert.ok(existsSync(path));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    for (const f of home.files()) {
      if (f.path === path) {
        assert.equal(f.content.includes(Buffer.from(VALUE)), false, 'plaintext in the encrypted file');
        assert.equal(f.content.includes(Buffer.from('api-key')), false, 'secret names are encrypted too');
      } else {
        assert.equal(f.content.includes(Buffer.from(VALUE)), false, `secret value found in ${f.path}`);
      }
    }
  });

  it('a wrong password is a clear error, and nothing leaks', async () => {
    const r = await home.thv(['secret', 'get', 'api-key'], { env: { TOOLHIVE_SECRETS_PASSWORD: 'not it' } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unable to decrypt the secrets file: wrong password/);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(VALUE));
    const noPw = await home.thv(['secret', 'get', 'api-key']);
    assert.equal(noPw.code, 2);
    assert.match(noPw.stderr, /needs a password.*no terminal/);
    assert.match(noPw.stderr, /TOOLHIVE_SECRETS_PASSWORD/);
  });

  it('never takes a value from the command line, and refuses empty values', async () => {
    const r = await home.thv(['secret', 'set', 'k', VALUE], { env: pw });
    assert.equal(r.code, 2);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(VALUE));
    const empty = await home.thv(['secret', 'set', 'k'], { input: '', env: pw });
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /secret value cannot be empty/);
  });

  it('concurrent sets all survive (locked read-modify-write, atomic replace)', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `parallel-${i}`);
    const results = await Promise.all(names.map((n) => home.thv(['secret', 'set', n], { input: `v-${n}`, env: pw })));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const list = await home.thv(['secret', 'list'], { env: pw });
    for (const n of names) assert.match(list.stdout, new RegExp(`- ${n}\\n`));
    const leftovers = home.files().filter((f) => /\.tmp-|\.lock$/.test(f.path));
    assert.deepEqual(leftovers.map((f) => f.path), []);
  });

  it('falls back to TOOLHIVE_SECRET_<NAME> unless TOOLHIVE_DISABLE_ENV_FALLBACK=true', async () => {
    const env = { ...pw, TOOLHIVE_SECRET_FROM_ENV: 'env-value' };
    const r = await home.thv(['secret', 'get', 'FROM_ENV'], { env });
    assert.equal(r.stdout, 'Secret FROM_ENV: env-value\n');
    const off = await home.thv(['secret', 'get', 'FROM_ENV'], { env: { ...env, TOOLHIVE_DISABLE_ENV_FALLBACK: 'true' } });
    assert.equal(off.code, 1);
  });
});

describe('thv secret with the environment provider', () => {
  let home: TestHome;
  before(() => {
    home = makeHome('thv-secret-env-');
  });
  after(() => home.cleanup());

  it('reads TOOLHIVE_SECRET_<NAME>, lists names, and is read-only', async () => {
    const env = { TOOLHIVE_SECRETS_PROVIDER: 'environment', TOOLHIVE_SECRET_TOKEN: 'abc', TOOLHIVE_SECRET_OTHER: 'def' };
    const get = await home.thv(['secret', 'get', 'TOKEN'], { env });
    assert.equal(get.stdout, 'Secret TOKEN: abc\n');
    const list = await home.thv(['secret', 'list'], { env });
    assert.equal(list.stdout, 'Available secrets:\n  - OTHER\n  - TOKEN\n');
    const set = await home.thv(['secret', 'set', 'X'], { env, input: 'y' });
    assert.equal(set.code, 2);
    assert.match(set.stderr, /read-only/);
    const missing = await home.thv(['secret', 'get', 'NOPE'], { env });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /TOOLHIVE_SECRET_NOPE/);
  });

  it('an unknown provider name is refused', async () => {
    const r = await home.thv(['secret', 'provider', 'vault']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /invalid secrets provider type: vault/);
  });
});
