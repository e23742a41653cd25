import type Docker from 'dockerode';
import type { Logger } from '../../logging.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import { engineMessage } from './client.js';

async function localImage(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch {
    return false;
  }
}

/** ToolHive's pull policy: `latest` or no tag → always try to pull (a local copy covers a failure). */
function alwaysPull(image: string): boolean {
  if (image.includes('@')) return false;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  return colon < 0 || lastSegment.slice(colon + 1) === 'latest';
}

/**
 * Makes sure `image` is in the engine: a pinned reference present locally is used as is; otherwise it is
 * pulled, with progress lines on `progress` (stderr). A failed pull says which image and why.
 */
export async function ensureImage(docker: Docker, image: string, logger: Logger, progress: NodeJS.WritableStream = process.stderr): Promise<void> {
  const present = await localImage(docker, image);
  if (present && !alwaysPull(image)) return;
  try {
    await pullImage(docker, image, progress);
    progress.write(`Successfully pulled ${image}\n`);
  } catch (err) {
    if (present) {
      logger.warn({ image, err: engineMessage(err) }, 'could not pull the image; using the local copy');
      return;
    }
    throw new ThvError(ErrorCodes.NotFound, `image not found locally and pulling it failed: ${image}: ${engineMessage(err)}`, {
      hint: 'check the image name and tag, that the registry is reachable, and that you are logged in to it; or build/load the image locally (docker build, docker load)',
    });
  }
}

async function pullImage(docker: Docker, image: string, progress: NodeJS.WritableStream): Promise<void> {
  const stream = (await docker.pull(image)) as NodeJS.ReadableStream;
  const lastStatus = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, out: Array<{ error?: string }>) => {
        const failed = out?.find((o) => o.error);
        if (err) reject(err);
        else if (failed) reject(new Error(failed.error));
        else resolve();
      },
      (event: { id?: string; status?: string; progress?: string; error?: string }) => {
        // One line per layer and status change, not per progress tick: readable in logs and terminals.
        const key = event.id ?? '';
        const status = event.status ?? '';
        if (lastStatus.get(key) === status) return;
        lastStatus.set(key, status);
        progress.write(`${key ? key + ': ' : ''}${status}\n`);
      },
    );
  });
}
