import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * JSON logs on stderr, as ToolHive does. The level comes from --debug / TOOLHIVE_DEBUG.
 * Redaction covers the fields where credentials could end up if someone logs a header bag or config.
 */
export type { Logger };

const REDACT = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'client_secret',
  '*.client_secret',
];

let root: Logger | undefined;

export function createLogger(options: { debug?: boolean; destination?: NodeJS.WritableStream } = {}): Logger {
  const debug = options.debug ?? isTruthy(process.env.TOOLHIVE_DEBUG);
  return pino(
    {
      level: process.env.THV_LOG_LEVEL ?? (debug ? 'debug' : 'info'),
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label.toUpperCase() }) },
      messageKey: 'msg',
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    (options.destination ?? process.stderr) as DestinationStream,
  );
}

export function rootLogger(): Logger {
  root ??= createLogger();
  return root;
}

export function setRootLogger(logger: Logger): void {
  root = logger;
}

export function isTruthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());
}
