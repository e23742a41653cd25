import type { Logger } from '../../logging.js';
import type { RunConfig } from '../../config/run-config.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import { engineClient } from './client.js';
import { buildProtocolImage, isProtocolScheme } from './build.js';
import { ensureImage } from './images.js';

export interface PrepareOptions {
  caCert?: string;
  imageVerification?: 'warn' | 'enabled' | 'disabled';
  /** Where build and pull progress goes (the terminal's stderr by default). */
  progress?: NodeJS.WritableStream;
}

/**
 * Gets the workload's image into the engine (built from npx://, uvx://, go://; else local or pulled)
 * and returns the config naming the image it will run.
 */
export async function prepareDockerRuntime(config: RunConfig, options: PrepareOptions, logger: Logger): Promise<{ config: RunConfig }> {
  const { docker, socketPath, apiVersion } = await engineClient();
  logger.debug({ socketPath, apiVersion }, 'container engine');
  let image = config.image;
  if (isProtocolScheme(image)) {
    image = await buildProtocolImage(docker, image, {
      runtimeConfig: config.runtime_config,
      caCert: options.caCert,
      progress: options.progress ?? process.stderr,
      logger,
    });
  } else {
    const verification = options.imageVerification ?? 'warn';
    if (verification === 'enabled') {
      // Refused rather than skipped: `enabled` promises that nothing unverified runs. Sigstore verification
      // needs the Sigstore trusted root (TUF, over the network) and the image's signature bundles from its
      // registry; thv implements neither, and offline neither is reachable.
      throw new ThvError(
        ErrorCodes.NotImplemented,
        `refusing to run ${image}: image signature verification (--image-verification enabled) is not available in this version of thv ` +
          "(sigstore verification needs the Sigstore trusted root, fetched over the network, and the image's signatures from its registry)",
        { hint: 'use --image-verification warn (the default) or disabled to run the image without signature verification' },
      );
    }
    if (verification === 'warn' && config.registry_server_name) {
      logger.warn({ image }, 'image signatures are not verified by this version of thv');
    }
    await ensureImage(docker, image, logger, options.progress ?? process.stderr);
  }
  const prepared = { ...config, image };
  return { config: prepared };
}
