/**
 * The seam between the proxy and whatever runs an MCP server: a local process or a container.
 * Kept small on purpose: the stdio bridge and the HTTP path only need to start an instance, talk to it
 * and learn when it ends; lifecycle commands (list, stop, rm) live with each runtime.
 */
import type { Logger } from '../logging.js';
import type { RuntimeKind } from '../config/run-config.js';
import type { ExitInfo } from './process/stdio-process.js';

export type { ExitInfo };

/** One running server instance (a child process, or a container attached to). */
export interface ServerHandle {
  /** Settles once the instance runs (rejects when it could not be started at all). */
  readonly spawned: Promise<void>;
  /** For logs: a process id or a short container id. */
  readonly pid: number | string | undefined;
  readonly exited: ExitInfo | undefined;
  /** Writes one JSON-RPC message (no raw newlines) to the server's stdin. */
  send(line: string): void;
  /** Ends the instance gracefully (stdin closed), then by force; resolves with how it ended. */
  stop(graceMs?: number): Promise<ExitInfo>;
  /** Counts (and rate-limits the warning for) a stdout line that is not JSON-RPC. */
  noteGarbage(line: string): void;
}

export interface LaunchRequest {
  /** stdio servers: each JSON-RPC line from stdout. Absent for HTTP servers, whose output is logged. */
  onLine?: (line: string) => void;
  onExit: (info: ExitInfo) => void;
  /** Added to the server's environment (MCP_PORT and friends for HTTP servers). */
  env?: Record<string, string>;
  /** HTTP servers: the port the server listens on, and where the proxy reaches it (127.0.0.1). */
  port?: number;
}

export interface Runtime {
  readonly kind: RuntimeKind;
  /** Starts one instance of the configured server. */
  launch(request: LaunchRequest, logger: Logger): ServerHandle;
  /**
   * HTTP servers: resolves once the instance answers on `port` (a published container port accepts
   * TCP before the server listens, so runtimes may probe differently); rejects when `until` settles first.
   */
  waitListening?(host: string, port: number, timeoutMs: number, until: Promise<unknown>): Promise<void>;
  /** Releases what the runtime set up for the workload (networks, helper containers). */
  cleanup?(): Promise<void>;
}
