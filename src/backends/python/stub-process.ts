import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../logging/logger.js';
import { FrameReader, FrameSplitter, FrameWriter } from './frame-codec.js';
import { Kind } from './stub-protocol.js';
import type { StubSettings } from './stub-settings.js';

/** The Python side, shipped in the package's `python/` folder (the same place from src/ and dist/). */
export const PYTHON_RUNTIME_DIR = fileURLToPath(new URL('../../../python/', import.meta.url));
const STUB_SCRIPT = `${PYTHON_RUNTIME_DIR}nereid_python_stub.py`;
/** Lines of the process's stderr kept to explain a failed start. */
const STDERR_TAIL_LINES = 20;
/** Log levels of the LOG message, as pb_utils.Logger numbers them. */
const LOG_LEVELS = ['info', 'warning', 'error', 'verbose'] as const;
/** How long the channel may outlive the process (a forked child of the model holding its end) before it is closed. */
const CHANNEL_DRAIN_MS = 1000;

/** How a stub process ended: its exit code or signal. */
export interface StubExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the interpreter could not be started at all. */
  readonly startError?: string;
}

export function describeExit(exit: StubExit): string {
  if (exit.startError !== undefined) return `could not be started (${exit.startError})`;
  if (exit.signal !== null) return `was killed by signal ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

export interface StubProcessOptions {
  readonly settings: StubSettings;
  readonly mode: 'serve' | 'auto-complete';
  /** The model.py to import. */
  readonly modelFile: string;
  /** Who the process serves, for log lines: `model 'm' instance 'm_0'`. */
  readonly label: string;
  readonly logger: Logger;
  /** Every message except PONG and LOG, which the process handles itself. */
  readonly onMessage: (kind: number, reader: FrameReader) => void;
  /** The process answered a `ping`. */
  readonly onPong?: () => void;
  /** Once, after the process has exited and its channel is drained. */
  readonly onExit: (exit: StubExit) => void;
}

/**
 * One Python process running nereid_python_stub.py, and the channel to it: a Unix socket on fd 3
 * carrying frames (frame-codec.ts) both ways. Its stdout and stderr become log lines; LOG messages
 * from pb_utils.Logger are logged at their level. `ping` sends a health check, which a thread of the
 * process answers (PONG, passed to `onPong`); deciding when it is hung is its supervisor's job.
 */
export class StubProcess {
  readonly #options: StubProcessOptions;
  readonly #child: ChildProcess;
  readonly #channel: Socket;
  readonly #stderrTail: string[] = [];
  #pingSequence = 0;
  #exit: Pick<StubExit, 'code' | 'signal' | 'startError'> | undefined;
  #isChannelClosed = false;
  #hasReportedExit = false;

  constructor(options: StubProcessOptions) {
    this.#options = options;
    // -B: no __pycache__ folders in model repositories (poll mode would see them as changes).
    this.#child = spawn(options.settings.pythonPath, ['-B', STUB_SCRIPT, options.mode, options.modelFile], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...options.settings.env, PYTHONUNBUFFERED: '1' },
    });
    this.#channel = this.#child.stdio[3] as Socket;
    const splitter = new FrameSplitter((kind, body) => this.#receiveOrKill(kind, body));
    this.#channel.on('data', (chunk: Buffer) => splitter.push(chunk));
    // A write to a process that has just died fails (EPIPE); its exit reports what happened.
    this.#channel.on('error', () => {});
    this.#channel.on('close', () => {
      this.#isChannelClosed = true;
      this.#reportExit();
    });
    this.#logLines(this.#child.stdout!, 'stdout');
    this.#logLines(this.#child.stderr!, 'stderr');
    this.#child.on('error', (error) => {
      this.#exit = { code: null, signal: null, startError: `${options.settings.pythonPath}: ${error.message}` };
      this.#channel.destroy();
    });
    this.#child.on('exit', (code, signal) => {
      this.#exit = { code, signal };
      this.#reportExit();
      // NOTE: a process the model forked (multiprocessing) inherits the channel and keeps it open.
      setTimeout(() => this.#channel.destroy(), CHANNEL_DRAIN_MS).unref();
    });
  }

  /** The last lines the process wrote to stderr (a traceback, usually). */
  get stderrTail(): string {
    return this.#stderrTail.join('\n');
  }

  send(kind: number, writer: FrameWriter = new FrameWriter()): void {
    if (this.#channel.destroyed || !this.#channel.writable) return;
    const parts = writer.finish(kind);
    this.#channel.cork();
    for (const part of parts) this.#channel.write(part);
    this.#channel.uncork();
  }

  /** Sends a health check; the answer comes to `onPong`. */
  ping(): void {
    this.send(Kind.Ping, new FrameWriter().u32(this.#pingSequence++));
  }

  kill(): void {
    this.#child.kill('SIGKILL');
  }

  #receive(kind: number, body: Uint8Array): void {
    const reader = new FrameReader(body);
    if (kind === Kind.Pong) {
      this.#options.onPong?.();
    } else if (kind === Kind.Log) {
      const level = LOG_LEVELS[reader.u8()] ?? 'info';
      const where = reader.str();
      const message = `${this.#options.label}: ${reader.str()}`;
      const { logger } = this.#options;
      if (level === 'verbose') logger.verbose(1, where, message);
      else logger[level](where, message);
    } else {
      this.#options.onMessage(kind, reader);
    }
  }

  /** A message that cannot be read means the two sides no longer agree: the process is replaced. */
  #receiveOrKill(kind: number, body: Uint8Array): void {
    try {
      this.#receive(kind, body);
    } catch (error) {
      this.#options.logger.error('python', `${this.#options.label}: ${(error as Error).message}; stopping the Python process`);
      this.kill();
    }
  }

  #logLines(stream: NodeJS.ReadableStream, name: 'stdout' | 'stderr'): void {
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (name === 'stderr') {
        this.#stderrTail.push(line);
        if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
        this.#options.logger.warning('python', `${this.#options.label} (stderr): ${line}`);
      } else {
        this.#options.logger.info('python', `${this.#options.label}: ${line}`);
      }
    });
  }

  /** NOTE: the process can exit before its last messages are read; the exit is reported once both happened. */
  #reportExit(): void {
    if (this.#exit === undefined || !this.#isChannelClosed || this.#hasReportedExit) return;
    this.#hasReportedExit = true;
    this.#options.onExit(this.#exit);
  }
}
