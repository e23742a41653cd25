import { CommanderError } from 'commander';
import { exitCodeFor, ThvError } from '../errors.js';

/** Prints an error for a person and returns the exit status scripts can rely on. */
export function reportError(err: unknown, stderr: NodeJS.WritableStream = process.stderr): number {
  if (err instanceof CommanderError) {
    // commander already printed its message; usage errors exit 2, help and version 0.
    return err.exitCode === 0 ? 0 : 2;
  }
  if (err instanceof ThvError) {
    stderr.write(`Error: ${err.message}\n`);
    if (err.hint) stderr.write(`Hint: ${err.hint}\n`);
    return exitCodeFor(err);
  }
  stderr.write(`Error: ${(err as Error)?.message ?? String(err)}\n`);
  return 1;
}

/** Wraps a command action so that any error is reported and sets the exit status instead of throwing. */
export function guardedAction(setExitCode: (code: number) => void) {
  return <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      try {
        await fn(...args);
      } catch (err) {
        setExitCode(reportError(err));
      }
    };
}
