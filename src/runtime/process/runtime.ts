import type { Logger } from '../../logging.js';
import type { LaunchRequest, Runtime, ServerHandle } from '../types.js';
import { StdioProcess, type ProcessSpec } from './stdio-process.js';

/** The process runtime behind the `Runtime` seam: every launch is a child process of `spec`. */
export function processRuntime(spec: ProcessSpec): Runtime {
  return {
    kind: 'process',
    launch(request: LaunchRequest, logger: Logger): ServerHandle {
      const env = request.env ? { ...spec.env, ...request.env } : spec.env;
      return new StdioProcess({ ...spec, env }, logger, request.onLine, request.onExit);
    },
  };
}
