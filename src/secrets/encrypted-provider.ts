import { ErrorCodes, ThvError } from '../errors.js';
import { readFileIfExists, withFileLock, writeFileAtomic } from './atomic-file.js';
import { decrypt, encrypt, newFileKey, type FileKey } from './crypto.js';
import type { SecretsProvider } from './types.js';

/** What the encrypted file holds once decrypted (ToolHive's `{"secrets": {...}}` shape). */
interface FileContent {
  secrets: Record<string, string>;
}

/**
 * Secrets in one AES-256-GCM encrypted file (`$XDG_DATA_HOME/toolhive/secrets_encrypted`, mode 0600).
 * Every change is a locked read-decrypt-modify-encrypt-write, written atomically, so concurrent `thv
 * secret set` commands neither lose updates nor leave a half-written file.
 */
export class EncryptedFileProvider implements SecretsProvider {
  readonly type = 'encrypted' as const;
  /** The derived key of the file as last read, so one command derives it once. */
  private fileKey: FileKey | undefined;

  constructor(
    private readonly path: string,
    /** Asked lazily: `creating` is true when there is no file yet (the prompt then asks twice). */
    private readonly password: (creating: boolean) => Promise<string>,
  ) {}

  private async load(): Promise<{ content: FileContent; fileKey: FileKey | undefined }> {
    const data = await readFileIfExists(this.path);
    if (data === undefined || data.length === 0) return { content: { secrets: {} }, fileKey: undefined };
    const { plaintext, fileKey } = await decrypt(data, await this.password(false), this.path);
    let parsed: unknown;
    try {
      parsed = JSON.parse(plaintext.toString('utf8'));
    } catch {
      throw new ThvError(ErrorCodes.InvalidConfig, `the secrets file ${this.path} decrypted but does not hold valid data`);
    }
    const secrets = (parsed as Partial<FileContent>)?.secrets;
    this.fileKey = fileKey;
    return { content: { secrets: typeof secrets === 'object' && secrets !== null ? secrets : {} }, fileKey };
  }

  private async save(content: FileContent, fileKey: FileKey | undefined): Promise<void> {
    const key = fileKey ?? this.fileKey ?? (await newFileKey(await this.password(true)));
    this.fileKey = key;
    await writeFileAtomic(this.path, encrypt(Buffer.from(JSON.stringify(content), 'utf8'), key), 0o600, 0o700);
  }

  async get(name: string): Promise<string> {
    const { content } = await this.load();
    const value = Object.hasOwn(content.secrets, name) ? content.secrets[name] : undefined;
    if (value === undefined) throw new ThvError(ErrorCodes.NotFound, `secret not found: ${name}`);
    return value;
  }

  async set(name: string, value: string): Promise<void> {
    await withFileLock(this.path, async () => {
      const { content, fileKey } = await this.load();
      content.secrets[name] = value;
      await this.save(content, fileKey);
    });
  }

  async delete(name: string): Promise<void> {
    await withFileLock(this.path, async () => {
      const { content, fileKey } = await this.load();
      if (!Object.hasOwn(content.secrets, name)) {
        throw new ThvError(ErrorCodes.NotFound, `cannot delete non-existent secret: ${name}`);
      }
      delete content.secrets[name];
      await this.save(content, fileKey);
    });
  }

  async list(): Promise<string[]> {
    const { content } = await this.load();
    return Object.keys(content.secrets).sort();
  }
}
