import { StringDecoder } from 'node:string_decoder';

/**
 * Decodes Docker's multiplexed attach stream (Tty=false): frames of an 8-byte header — stream type
 * (1 stdout, 2 stderr), three zero bytes, big-endian payload length — then the payload. Frames may be
 * split across or packed into chunks; text is decoded per stream so a UTF-8 character split between two
 * frames survives.
 */
export class AttachDemuxer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly out = new StringDecoder('utf8');
  private readonly err = new StringDecoder('utf8');

  constructor(
    private readonly onStdout: (text: string) => void,
    private readonly onStderr: (text: string) => void,
  ) {}

  push(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    for (;;) {
      if (this.pendingBytes < 8) return;
      const head = this.peek(8);
      const type = head[0]!;
      const length = head.readUInt32BE(4);
      if (this.pendingBytes < 8 + length) return;
      const frame = this.take(8 + length).subarray(8);
      if (type === 2) this.onStderr(this.err.write(frame));
      else if (type === 1 || type === 0) this.onStdout(this.out.write(frame));
      // Other types do not occur with Tty=false; skipping keeps the framing aligned.
    }
  }

  private peek(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    const first = this.pending[0]!;
    const out = first.subarray(0, n);
    if (first.length === n) this.pending.shift();
    else this.pending[0] = first.subarray(n);
    this.pendingBytes -= n;
    return out;
  }
}

/** Splits text into lines across chunks; a trailing partial line waits for the next chunk. */
export class LineSplitter {
  private partial = '';
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxChars = 16 * 1024 * 1024,
    private readonly onOverlong?: (bytes: number) => void,
  ) {}

  push(text: string): void {
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl < 0) {
      this.partial += text;
      if (this.partial.length > this.maxChars) {
        this.onOverlong?.(this.partial.length);
        this.partial = '';
      }
      return;
    }
    while (nl >= 0) {
      let line = text.slice(start, nl);
      if (this.partial) {
        line = this.partial + line;
        this.partial = '';
      }
      this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    if (start < text.length) this.partial = text.slice(start);
  }

  flush(): void {
    if (this.partial) this.onLine(this.partial);
    this.partial = '';
  }
}
