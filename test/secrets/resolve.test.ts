import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSecretRef, prepareDetachedSecrets, resolveSecretEnv } from '../../src/secrets/index.js';
import { EncryptedFileProvider } from '../../src/secrets/encrypted-provider.js';
import { EnvironmentProvider } from '../../src/secrets/environment-provider.js';
import { isThvError } from '../../src/errors.js';

describe('resolveSecretEnv', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'thv-resolve-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('parses NAME,target=VAR as ToolHive does', () => {
    assert.deepEqual(parseSecretRef('gh,target=GITHUB_TOKEN'), { name: 'gh', target: 'GITHUB_TOKEN' });
    assert.deepEqual(parseSecretRef('a=b,target=X'), { name: 'a=b', target: 'X' });
    assert.throws(() => parseSecretRef('gh'), /expected NAME,target=ENV_VAR/);
    assert.throws(() => parseSecretRef(',target=X'), /invalid secret reference/);
  });

  it('maps each reference onto its target variable', async () => {
    const provider = new EncryptedFileProvider(join(dir, 'secrets_encrypted'), async () => 'pw');
    await provider.set('gh', 'ghp_value');
    await provider.set('db', 'db_value');
    const env = await resolveSecretEnv(['gh,target=GITHUB_TOKEN', 'db,target=DATABASE_PASSWORD'], { provider });
    assert.deepEqual(env, { GITHUB_TOKEN: 'ghp_value', DATABASE_PASSWORD: 'db_value' });
    assert.deepEqual(await resolveSecretEnv([], { provider }), {});
  });

  it('names every missing secret in one error, without values', async () => {
    const provider = new EnvironmentProvider({ TOOLHIVE_SECRET_PRESENT: 'present-value' });
    await assert.rejects(resolveSecretEnv(['PRESENT,target=A', 'gone1,target=B', 'gone2,target=C'], { provider }), (err: unknown) => {
      assert.ok(isThvError(err));
      assert.equal(err.message, 'secrets not found in the environment secrets provider: gone1, gone2');
      assert.doesNotMatch(`${err.message} ${err.hint}`, /present-value/);
      return true;
    });
  });

  it('uses the configured provider from the environment when none is given', async () => {
    const env = await resolveSecretEnv(['TOKEN,target=API_TOKEN'], {
      env: { TOOLHIVE_SECRETS_PROVIDER: 'environment', TOOLHIVE_SECRET_TOKEN: 't0k3n', XDG_CONFIG_HOME: dir },
    });
    assert.deepEqual(env, { API_TOKEN: 't0k3n' });
  });
});

describe('prepareDetachedSecrets', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'thv-detached-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('checks references now and hands the encrypted store password to the child', async () => {
    const env = { XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, TOOLHIVE_SECRETS_PROVIDER: 'encrypted', TOOLHIVE_SECRETS_PASSWORD: 'pw-for-child' };
    const { encryptedSecretsPath } = await import('../../src/secrets/xdg.js');
    await new EncryptedFileProvider(encryptedSecretsPath(env), async () => 'pw-for-child').set('present', 'v');
    assert.deepEqual(await prepareDetachedSecrets([], { env }), {});
    assert.deepEqual(await prepareDetachedSecrets(['present,target=P'], { env }), { TOOLHIVE_SECRETS_PASSWORD: 'pw-for-child' });
    await assert.rejects(prepareDetachedSecrets(['absent,target=A'], { env }), /secret not found in the encrypted secrets provider: absent/);
    const envProvider = { TOOLHIVE_SECRETS_PROVIDER: 'environment', TOOLHIVE_SECRET_X: '1' };
    assert.deepEqual(await prepareDetachedSecrets(['X,target=Y'], { env: envProvider }), {});
  });
});
