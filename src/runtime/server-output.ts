import type { Logger } from '../logging.js';

const STDERR_TAIL_LINES = 20;

/**
 * What an MCP server writes besides its JSON-RPC messages, the same for a child process and a
 * container: stdout lines that are not JSON-RPC (dropped, with a rate-limited warning), and stderr
 * (logged, its tail kept for the error report when the server dies).
 */
export class ServerOutput {
  private readonly tail: string[] = [];
  private garbageLines = 0;

  constructor(
    private readonly logger: Logger,
    /** How the log names the server: `{ pid }` or `{ container }`. */
    private readonly who: () => Record<string, unknown>,
  ) {}

  /**
   * The JSON-RPC message in a stdout line, or undefined. Servers sometimes print banners or logs on
   * stdout: keep what looks like an embedded object, as ToolHive does, and drop the rest.
   */
  messageIn(raw: string): string | undefined {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length === 0) return undefined;
    if (line.charCodeAt(0) === 0x7b /* { */) return line;
    const first = line.indexOf('{');
    const last = line.lastIndexOf('}');
    if (first < 0 || last < first) {
      this.noteGarbage(line);
      return undefined;
    }
    return line.slice(first, last + 1);
  }

  noteGarbage(line: string): void {
    this.garbageLines++;
    if (this.garbageLines <= 5 || this.garbageLines % 1000 === 0) {
      this.logger.warn({ line: line.slice(0, 200), count: this.garbageLines }, 'MCP server wrote a non-JSON-RPC line to stdout; ignored');
    }
  }

  stderrLine(line: string): void {
    if (line.length === 0) return;
    this.tail.push(line.length > 500 ? line.slice(0, 500) + '…' : line);
    if (this.tail.length > STDERR_TAIL_LINES) this.tail.shift();
    this.logger.info({ ...this.who(), stderr: line.slice(0, 2000) }, 'server stderr');
  }

  /** The last stderr lines, for an exit report. */
  stderrTail(): string[] {
    return [...this.tail];
  }
}
