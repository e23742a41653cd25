import type Docker from 'dockerode';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../logging.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import type { ExitInfo, ServerHandle } from '../types.js';
import { engineMessage, statusOf } from './engine-errors.js';
import { AttachDemuxer, LineSplitter } from './demux.js';
import { ServerOutput } from '../server-output.js';

/**
 * One MCP server container. It is created, attached to (stdin for stdio servers, stdout and stderr for
 * all), started, and watched with the engine's wait API, so an exit, an OOM kill or a removal by hand
 * all end in `onExit`, with the reason when the engine knows it. stdio servers' stdout lines go to `onLine`; stderr (and an HTTP server's stdout)
 * goes to the log, its tail kept for error reports. thv removes each container once it has ended (not
 * AutoRemove: the engine must still know an exited container to tell a removal by hand from an exit).
 */
export class ContainerServer implements ServerHandle {
  readonly spawned: Promise<void>;
  exited: ExitInfo | undefined;
  private id: string | undefined;
  private container: Docker.Container | undefined;
  private stream: Duplex | undefined;
  private readonly output: ServerOutput;
  private corked = false;
  private stopping = false;
  private finishing = false;
  /** Messages sent before the container started; undefined once it runs. */
  private queued: string[] | undefined = [];
  private readonly exitWaiters: Array<(info: ExitInfo) => void> = [];

  constructor(
    private readonly docker: Promise<Docker>,
    private readonly create: Promise<Docker.ContainerCreateOptions>,
    private readonly logger: Logger,
    private readonly onLine: ((line: string) => void) | undefined,
    private readonly onExit: (info: ExitInfo) => void,
  ) {
    this.output = new ServerOutput(logger, () => ({ container: this.pid }));
    this.spawned = this.boot();
    this.spawned.catch((err: Error) => this.finish({ code: null, signal: null, stderrTail: this.output.stderrTail(), spawnError: err.message }));
  }

  get pid(): string | undefined {
    return this.id?.slice(0, 12);
  }

  private async boot(): Promise<void> {
    const options = await this.create;
    let container: Docker.Container;
    try {
      container = await (await this.docker).createContainer(options);
    } catch (err) {
      throw new ThvError(ErrorCodes.ServerStartFailed, `could not create the container for ${options.Image}: ${engineMessage(err)}`);
    }
    this.container = container;
    this.id = container.id;
    const stdio = this.onLine !== undefined;
    const stream = (await container.attach({ stream: true, stdin: stdio, stdout: true, stderr: true, hijack: stdio })) as unknown as Duplex;
    this.stream = stream;
    const stderrLines = new LineSplitter((line) => this.output.stderrLine(line));
    const stdoutLines = stdio
      ? new LineSplitter((line) => this.emitLine(line), undefined, (bytes) => this.logger.warn({ bytes }, 'MCP server wrote an over-long line to stdout; dropped'))
      : stderrLines;
    const demux = new AttachDemuxer((t) => stdoutLines.push(t), (t) => stderrLines.push(t));
    stream.on('data', (chunk: Buffer) => demux.push(chunk));
    stream.on('error', () => {
      // The container went away: the wait below reports it.
    });
    // Asked for before start, so that even an instant exit is seen.
    const waited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode?: number; Error?: { Message?: string } | null }>;
    waited.then(
      (res) => {
        stderrLines.flush();
        const code = typeof res.StatusCode === 'number' ? res.StatusCode : null;
        this.finishAfterOutput({ code, signal: code === 137 ? 'SIGKILL' : null, stderrTail: this.output.stderrTail() });
      },
      (err: unknown) => {
        const gone = statusOf(err) === 404;
        this.finish({
          code: null,
          signal: null,
          stderrTail: this.output.stderrTail(),
          spawnError: gone ? 'the MCP server container was removed' : `lost the container: ${engineMessage(err)}`,
        });
      },
    );
    try {
      await container.start();
    } catch (err) {
      await this.remove();
      throw new ThvError(ErrorCodes.ServerStartFailed, `could not start the container for ${options.Image}: ${engineMessage(err)}`);
    }
    this.logger.debug({ container: this.pid, name: options.name }, 'started MCP server container');
    const queued = this.queued ?? [];
    this.queued = undefined;
    for (const line of queued) this.send(line);
  }

  /** The attach stream may still carry the last output when wait answers; give it a moment to drain. */
  private finishAfterOutput(info: ExitInfo): void {
    const s = this.stream;
    if (!s || s.destroyed || s.readableEnded) return this.finish(info);
    const done = (): void => {
      clearTimeout(timer);
      this.finish({ ...info, stderrTail: this.output.stderrTail() });
    };
    const timer = setTimeout(done, 200);
    s.once('end', done);
    s.once('close', done);
  }

  private finish(info: ExitInfo): void {
    if (this.exited || this.finishing) return;
    this.finishing = true;
    this.stream?.destroy();
    void this.explain(info).then((explained) => {
      this.exited = explained;
      this.onExit(explained);
      for (const w of this.exitWaiters.splice(0)) w(explained);
      void this.remove();
    });
  }

  /** Says why an unexpected end happened: removed by hand, or killed for memory (the exit code alone does not). */
  private async explain(info: ExitInfo): Promise<ExitInfo> {
    if (this.stopping || info.spawnError || !this.container) return info;
    // A forced removal kills first: wait answers while the engine is still removing. Look again briefly.
    const deadline = Date.now() + (info.code === 137 ? 1500 : 0);
    for (;;) {
      try {
        const state = (await this.container.inspect()).State;
        if (state?.OOMKilled) return { ...info, spawnError: 'the MCP server container was killed for running out of memory' };
        if (state?.Status === 'removing') return { ...info, spawnError: 'the MCP server container was removed' };
      } catch (err) {
        if (statusOf(err) === 404) return { ...info, spawnError: 'the MCP server container was removed' };
        return info;
      }
      if (Date.now() >= deadline) return info;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  send(line: string): void {
    if (this.exited) return;
    // Until the container runs, messages wait here (a process has its stdin from the start; a container not).
    if (this.queued) {
      this.queued.push(line);
      return;
    }
    const s = this.stream;
    if (!s || s.destroyed) return;
    // Same batching as the process runtime: one write per event-loop turn.
    if (!this.corked) {
      this.corked = true;
      s.cork();
      setImmediate(() => {
        this.corked = false;
        s.uncork();
      });
    }
    s.write(line + '\n');
  }

  /** Closes stdin (the server sees EOF), then stops the container (SIGTERM, SIGKILL after the grace). */
  async stop(graceMs = 2000): Promise<ExitInfo> {
    this.stopping = true;
    try {
      await this.spawned;
    } catch {
      return this.exited!;
    }
    if (this.exited) return this.exited;
    const done = new Promise<ExitInfo>((resolve) => this.exitWaiters.push(resolve));
    if (this.onLine) this.stream?.end();
    const timer = setTimeout(() => {
      void this.container?.stop({ t: Math.max(1, Math.round(graceMs / 1000)) }).catch(() => {});
    }, this.onLine ? graceMs : 0);
    const info = await done;
    clearTimeout(timer);
    return info;
  }

  private async remove(): Promise<void> {
    try {
      await this.container?.remove({ force: true });
    } catch (err) {
      // 404: already gone (removed by hand); 409: removal already in progress.
      const s = statusOf(err);
      if (s !== 404 && s !== 409) this.logger.warn({ container: this.pid, err: engineMessage(err) }, 'could not remove the MCP server container');
    }
  }

  private emitLine(raw: string): void {
    const message = this.output.messageIn(raw);
    if (message !== undefined) this.onLine!(message);
  }

  noteGarbage(line: string): void {
    this.output.noteGarbage(line);
  }
}
