import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decrypt, encrypt, newFileKey } from '../../src/secrets/crypto.js';
import { isThvError } from '../../src/errors.js';

describe('encrypted secrets file format', () => {
  it('round-trips, with a fresh nonce each time', async () => {
    const key = await newFileKey('correct horse');
    const plain = Buffer.from('{"secrets":{"a":"value-123"}}');
    const one = encrypt(plain, key);
    const two = encrypt(plain, key);
    assert.notDeepEqual(one, two);
    assert.equal(one.includes(Buffer.from('value-123')), false);
    assert.equal(one.subarray(0, 6).toString(), 'THVSEC');
    const { plaintext } = await decrypt(one, 'correct horse', '/x');
    assert.deepEqual(plaintext, plain);
  });

  it('a wrong password is a clear error that carries nothing secret', async () => {
    const data = encrypt(Buffer.from('{"secrets":{"a":"value-123"}}'), await newFileKey('right'));
    await assert.rejects(decrypt(data, 'wrong', '/x'), (err: unknown) => {
      assert.ok(isThvError(err));
      assert.match(err.message, /wrong password/);
      assert.doesNotMatch(err.message + (err.hint ?? ''), /value-123|right/);
      return true;
    });
  });

  it('a modified file or header does not decrypt', async () => {
    const data = encrypt(Buffer.from('{"secrets":{}}'), await newFileKey('pw'));
    const flipped = Buffer.from(data);
    flipped[flipped.length - 20]! ^= 1;
    await assert.rejects(decrypt(flipped, 'pw', '/x'), /wrong password \(or the file was modified\)/);
    const salted = Buffer.from(data);
    salted[8]! ^= 1; // inside the salt, authenticated as associated data
    await assert.rejects(decrypt(salted, 'pw', '/x'), /wrong password/);
    await assert.rejects(decrypt(Buffer.from('not a secrets file at all, just text'), 'pw', '/x'), /not a thv encrypted secrets file/);
  });
});
