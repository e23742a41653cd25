import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ErrorCodes, ThvError } from '../errors.js';

/**
 * Writes a file so that readers see the old content or the new one, never a torn mix: a temporary file in
 * the same directory (`.<name>.tmp-<random>`, ToolHive's pattern), fsync, then rename over the target.
 * The mode is set when the temporary file is created, so the content is never readable by others.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600, dirMode = 0o750): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: dirMode });
  const tmp = join(dir, `.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`);
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Reads a file, or undefined when it does not exist. */
export async function readFileIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` holding `<path>.lock`, a lock file created exclusively and holding the owner's PID. A lock
 * left by a process that no longer exists is taken over. Read-modify-write cycles on shared files go
 * through here so that two `thv` commands never lose each other's changes.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 5000): Promise<T> {
  const lockPath = `${path}.lock`;
  await mkdir(dirname(lockPath), { recursive: true, mode: 0o750 });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFileIfExists(lockPath))?.toString() ?? '');
      if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new ThvError(ErrorCodes.Internal, `timed out waiting for the lock on ${path}`, {
          hint: `another thv command is using it; if none is running, remove ${lockPath}`,
        });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
}
