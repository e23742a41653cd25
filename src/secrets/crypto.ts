import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';
import { ErrorCodes, ThvError } from '../errors.js';

/**
 * The encrypted secrets file format (ours; see docs/secrets.md):
 *
 *   "THVSEC" | version (1 byte) | salt (16) | nonce (12) | AES-256-GCM ciphertext | tag (16)
 *
 * The key is derived from the password with scrypt. The cost parameters belong to the format version and
 * live here, not in the file, so a tampered file cannot make us allocate unbounded memory, and raising the
 * cost means a new version. ToolHive derives its key with Argon2id, which Node 20 does not ship; a file
 * written by one tool is therefore not readable by the other (docs/differences.md).
 */
const MAGIC = Buffer.from('THVSEC', 'ascii');
const VERSION = 1;
const SALT_LENGTH = 16;
const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;
const KEY_LENGTH = 32;
/** scrypt N=2^15, r=8, p=1: 32 MiB and roughly 0.1–0.2 s per derivation on this kind of machine. */
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const HEADER_LENGTH = MAGIC.length + 1 + SALT_LENGTH + NONCE_LENGTH;

export function deriveKey(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(Buffer.from(password, 'utf8'), salt, KEY_LENGTH, SCRYPT, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** A key with the salt it came from; reused for every write in one command so it is derived once. */
export interface FileKey {
  key: Buffer;
  salt: Buffer;
}

export async function newFileKey(password: string): Promise<FileKey> {
  const salt = randomBytes(SALT_LENGTH);
  return { key: await deriveKey(password, salt), salt };
}

export function encrypt(plaintext: Buffer, fileKey: FileKey): Buffer {
  const nonce = randomBytes(NONCE_LENGTH);
  const header = Buffer.concat([MAGIC, Buffer.from([VERSION]), fileKey.salt, nonce]);
  const cipher = createCipheriv('aes-256-gcm', fileKey.key, nonce);
  // The header is authenticated too, so nobody can swap in another salt or version unnoticed.
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, body, cipher.getAuthTag()]);
}

function corrupt(path: string, why: string): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, `the secrets file ${path} is not a thv encrypted secrets file (${why})`, {
    hint: 'move it away to start a new store; secrets in it cannot be read by thv',
  });
}

/** Decrypts a file's content; a wrong password is a clear error (never echoes anything secret). */
export async function decrypt(data: Buffer, password: string, path: string): Promise<{ plaintext: Buffer; fileKey: FileKey }> {
  if (data.length < HEADER_LENGTH + TAG_LENGTH || !data.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw corrupt(path, 'unknown format');
  }
  const version = data[MAGIC.length];
  if (version !== VERSION) throw corrupt(path, `format version ${String(version)} is not supported`);
  const header = data.subarray(0, HEADER_LENGTH);
  const salt = Buffer.from(data.subarray(MAGIC.length + 1, MAGIC.length + 1 + SALT_LENGTH));
  const nonce = data.subarray(MAGIC.length + 1 + SALT_LENGTH, HEADER_LENGTH);
  const body = data.subarray(HEADER_LENGTH, data.length - TAG_LENGTH);
  const tag = data.subarray(data.length - TAG_LENGTH);
  const key = await deriveKey(password, salt);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(header);
  decipher.setAuthTag(tag);
  try {
    const plaintext = Buffer.concat([decipher.update(body), decipher.final()]);
    return { plaintext, fileKey: { key, salt } };
  } catch {
    throw new ThvError(ErrorCodes.InvalidArgument, 'unable to decrypt the secrets file: wrong password (or the file was modified)', {
      hint: 'check TOOLHIVE_SECRETS_PASSWORD, or the password you typed',
    });
  }
}
