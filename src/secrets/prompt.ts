import { createInterface } from 'node:readline';
import { ErrorCodes, ThvError } from '../errors.js';

/**
 * Terminal prompts. Questions go to stderr so stdout stays machine-readable. Hidden input is read in raw
 * mode and never echoed.
 */

/** True when a person can answer: stdin and stderr are terminals and this is not a detached proxy. */
export function canPrompt(env: NodeJS.ProcessEnv = process.env): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true && env.TOOLHIVE_DETACHED !== '1';
}

export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  const out = process.stderr;
  // Raw mode first: anything typed once the question shows is not echoed.
  const wasRaw = stdin.isRaw;
  stdin.setRawMode(true);
  stdin.resume();
  out.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode(wasRaw);
      stdin.pause();
      out.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(new ThvError(ErrorCodes.InvalidArgument, 'cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export function promptVisible(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}

/** All of stdin (piped input), without one trailing newline, as ToolHive's `secret set` does. */
export async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
