/**
 * Typed errors with stable codes. The CLI maps a code to an exit status; messages are written for the
 * person at the terminal and must never carry a token, secret or password.
 */
export const ErrorCodes = {
  /** Flags or arguments that cannot be accepted as given (exit 2, like a usage error). */
  InvalidArgument: 'invalid_argument',
  /** A configuration file that could not be read or does not validate. */
  InvalidConfig: 'invalid_config',
  /** The selected runtime is not available on this machine. */
  RuntimeUnavailable: 'runtime_unavailable',
  /** The MCP server could not be started or exited while starting. */
  ServerStartFailed: 'server_start_failed',
  /** A port or address could not be bound. */
  AddressInUse: 'address_in_use',
  /** Something that was asked for does not exist. */
  NotFound: 'not_found',
  /** Something of that name exists already. */
  AlreadyExists: 'already_exists',
  /** Not implemented yet in this version of thv. */
  NotImplemented: 'not_implemented',
  /** A remote MCP server (thv run <URL>) could not be reached. */
  RemoteUnreachable: 'remote_unreachable',
  /** Authentication toward a remote MCP server failed (OAuth flow, refresh, static token refused). */
  RemoteAuthFailed: 'remote_auth_failed',
  /** Anything unexpected. */
  Internal: 'internal',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class ThvError extends Error {
  readonly code: ErrorCode;
  /** A short suggestion printed after the message ("try --runtime process"). */
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ThvError';
    this.code = code;
    this.hint = options?.hint;
  }
}

/** Exit statuses scripts can rely on. 1 = failure at run time, 2 = bad usage or configuration. */
export function exitCodeFor(err: unknown): number {
  if (!(err instanceof ThvError)) return 1;
  switch (err.code) {
    case ErrorCodes.InvalidArgument:
    case ErrorCodes.InvalidConfig:
      return 2;
    case ErrorCodes.NotImplemented:
      return 3;
    default:
      return 1;
  }
}

export function isThvError(err: unknown, code?: ErrorCode): err is ThvError {
  return err instanceof ThvError && (code === undefined || err.code === code);
}
