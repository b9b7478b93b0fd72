import type { LiveCounts } from './load-generator.js';
import { STABILITY_WINDOW_COUNT, type Stability } from './measurement.js';
import { type ProfileHooks, type StepLoad, type StepResult, type WindowResult, describeLoad } from './profiler.js';

/** Where progress goes: stderr, or any stream with `write` (tests pass one). */
export interface ProgressOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface ProgressOptions {
  readonly measurementIntervalMs: number;
  readonly maxTrials: number;
  readonly batchSize: number;
  /** Print every window, not only every step. */
  readonly isVerbose: boolean;
}

const ms = (us: number): string => `${(us / 1000).toFixed(2)} ms`;
const percent = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(1)} %` : '—');

function agreement(windowNumber: number, stability: Stability): string {
  if (windowNumber < STABILITY_WINDOW_COUNT) return `stability is judged from ${STABILITY_WINDOW_COUNT} windows`;
  return `last ${STABILITY_WINDOW_COUNT} windows differ by ${percent(stability.throughputSpreadPercent)} in throughput, ${percent(stability.latencySpreadPercent)} in latency`;
}

/**
 * The progress display of `nereid perf`, on stderr. On a terminal one status line is rewritten in place
 * while a window runs (load, window, elapsed time, answers so far); elsewhere (a log, a pipe) nothing is
 * rewritten and a line is printed per window. Each finished step gets a line either way.
 */
export class ProgressDisplay implements ProfileHooks {
  readonly #output: ProgressOutput;
  readonly #options: ProgressOptions;
  #ticker: NodeJS.Timeout | undefined;

  constructor(output: ProgressOutput, options: ProgressOptions) {
    this.#output = output;
    this.#options = options;
  }

  onWindowStart(load: StepLoad, windowNumber: number, live: LiveCounts): void {
    if (this.#output.isTTY !== true) return;
    const startMs = performance.now();
    const draw = (): void => {
      const elapsedS = (performance.now() - startMs) / 1000;
      const rate = elapsedS > 0 ? (live.completed * this.#options.batchSize) / elapsedS : 0;
      const failed = live.failed > 0 ? `, ${live.failed} failed` : '';
      this.#output.write(
        `\r\x1b[2K${describeLoad(load)} · window ${windowNumber}/${this.#options.maxTrials} · ${elapsedS.toFixed(1)}/${(this.#options.measurementIntervalMs / 1000).toFixed(1)} s · ${live.completed} answered${failed} (${rate.toFixed(0)} infer/s)`,
      );
    };
    draw();
    this.#ticker = setInterval(draw, 250);
    this.#ticker.unref();
  }

  onWindowEnd(load: StepLoad, windowNumber: number, window: WindowResult, stability: Stability): void {
    this.#stopTicker();
    if (this.#output.isTTY !== true || this.#options.isVerbose) {
      this.#output.write(
        `${describeLoad(load)}, window ${windowNumber}: ${window.throughputInferPerSec.toFixed(1)} infer/s, avg ${ms(window.latencyUs.averageUs)}, p99 ${ms(window.latencyUs.p99Us)}, ` +
          `${window.requestCount} requests (server counted ${window.server.successCount})` +
          `${window.failedCount > 0 ? `, ${window.failedCount} failed` : ''}; ${agreement(windowNumber, stability)}\n`,
      );
    }
  }

  onStepEnd(result: StepResult): void {
    const stable = result.isStable ? `stable after ${result.windows.length} windows` : `not stable after ${result.windows.length} windows`;
    this.#output.write(`${describeLoad(result.load)}: ${result.throughputInferPerSec.toFixed(1)} infer/s, avg ${ms(result.latencyUs.averageUs)}, p99 ${ms(result.latencyUs.p99Us)} (${stable})\n`);
  }

  #stopTicker(): void {
    if (this.#ticker === undefined) return;
    clearInterval(this.#ticker);
    this.#ticker = undefined;
    this.#output.write('\r\x1b[2K');
  }
}
