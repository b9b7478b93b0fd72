/**
 * When an ONNX Runtime instance may run its model on the main thread, with no thread hop (issue 20).
 * A run there blocks the event loop for its whole duration, so only a model whose runs take some tens
 * of microseconds at most qualifies, and only for runs no bigger than the ones it was measured on:
 *
 * - every instance starts on its execution thread; once the median of a window of WINDOW_RUNS runs
 *   there is at most MAX_INLINE_RUN_US and nine in ten took at most SLOW_RUN_US, it may run inline
 *   executions of at most the input bytes seen in that window (a window that fails is followed by
 *   another: medians and deciles, because a busy machine preempts a run now and then);
 * - inline, a window of INLINE_WINDOW_RUNS whose median is past MAX_INLINE_RUN_US, or one run past
 *   MAX_SINGLE_RUN_US (far past: a preempted or garbage-collected run is not the model's), sends the
 *   instance back to its thread for good: a model whose run time grows is not one to gamble the event
 *   loop on. The first INLINE_WARMUP_RUNS inline runs are not judged: a new session's first runs
 *   allocate and take milliseconds.
 *
 * bench/channel.ts measured the hop it saves at about 15 µs of a 35 µs round trip for a 16-value
 * identity (docs/benchmarks.md, "The hot path").
 */
export const MAX_INLINE_RUN_US = 50;
export const SLOW_RUN_US = 200;
export const MAX_SINGLE_RUN_US = 5000;
export const WINDOW_RUNS = 64;
const INLINE_WINDOW_RUNS = 16;
export const INLINE_WARMUP_RUNS = 4;

/** What OrtInstance asks of the guard (tests give it another policy). */
export interface InlinePolicy {
  recordThreadRun(runUs: number, inputBytes: number): boolean;
  allows(inputBytes: number): boolean;
  recordInlineRun(runUs: number): boolean;
}

export class InlineGuard implements InlinePolicy {
  #window: number[] = [];
  #windowMaxInputBytes = 0;
  #maxInputBytes = -1;
  #isRetired = false;
  #inlineRuns = 0;

  /** Records a run on the execution thread; true once the instance qualifies (the first time only). */
  recordThreadRun(runUs: number, inputBytes: number): boolean {
    if (this.#isRetired || this.#maxInputBytes >= 0) return false;
    this.#window.push(runUs);
    this.#windowMaxInputBytes = Math.max(this.#windowMaxInputBytes, inputBytes);
    if (this.#window.length < WINDOW_RUNS) return false;
    const sorted = this.#window.sort((a, b) => a - b);
    const qualifies = sorted[WINDOW_RUNS >> 1]! <= MAX_INLINE_RUN_US && sorted[Math.floor(WINDOW_RUNS * 0.9)]! <= SLOW_RUN_US;
    if (qualifies) this.#maxInputBytes = this.#windowMaxInputBytes;
    this.#window = [];
    this.#windowMaxInputBytes = 0;
    return qualifies;
  }

  /** Whether an execution of `inputBytes` may run inline now. */
  allows(inputBytes: number): boolean {
    return !this.#isRetired && inputBytes <= this.#maxInputBytes;
  }

  /** Records how long an inline run blocked the event loop; false when the instance goes back to its thread for good. */
  recordInlineRun(runUs: number): boolean {
    if (++this.#inlineRuns <= INLINE_WARMUP_RUNS) return true;
    if (runUs > MAX_SINGLE_RUN_US) return this.#retire();
    this.#window.push(runUs);
    if (this.#window.length < INLINE_WINDOW_RUNS) return true;
    const median = this.#window.sort((a, b) => a - b)[INLINE_WINDOW_RUNS >> 1]!;
    this.#window = [];
    return median <= MAX_INLINE_RUN_US || this.#retire();
  }

  #retire(): false {
    this.#isRetired = true;
    this.#maxInputBytes = -1;
    return false;
  }
}
