/**
 * When an ONNX Runtime instance may run its model on the main thread, with no thread hop (issue 20).
 * A run there blocks the event loop for its whole duration, so only a model whose runs take a few
 * microseconds qualifies, and only for runs no bigger than the ones it was measured on:
 *
 * - every instance starts on its execution thread; after PROBATION_RUNS runs there that took at most
 *   MAX_INLINE_RUN_US, with none past SLOW_RUN_US between them, it may run inline executions of at most
 *   the input bytes seen then (a run between the two counts for neither: a busy machine preempts);
 * - inline, one run past SLOW_RUN_US, or a running mean (weight 1/8) past MAX_INLINE_RUN_US, sends the
 *   instance back to its thread for good: a model whose run time varies is not one to gamble the event
 *   loop on.
 *
 * bench/channel.ts measured the hop it saves at about 15 µs of a 35 µs round trip for a 16-value
 * identity (docs/benchmarks.md, "The hot path").
 */
export const MAX_INLINE_RUN_US = 40;
export const SLOW_RUN_US = 4 * MAX_INLINE_RUN_US;
export const PROBATION_RUNS = 64;

export class InlineGuard {
  #fastRuns = 0;
  #maxInputBytes = 0;
  #isRetired = false;
  #meanInlineRunUs = 0;

  /** Records a run on the execution thread; true once the instance qualifies (the first time only). */
  recordThreadRun(runUs: number, inputBytes: number): boolean {
    if (this.#isRetired || this.#fastRuns >= PROBATION_RUNS) return false;
    if (runUs > SLOW_RUN_US) {
      this.#fastRuns = 0;
      this.#maxInputBytes = 0;
      return false;
    }
    if (runUs > MAX_INLINE_RUN_US) return false;
    this.#fastRuns++;
    this.#maxInputBytes = Math.max(this.#maxInputBytes, inputBytes);
    return this.#fastRuns === PROBATION_RUNS;
  }

  /** Whether an execution of `inputBytes` may run inline now. */
  allows(inputBytes: number): boolean {
    return !this.#isRetired && this.#fastRuns >= PROBATION_RUNS && inputBytes <= this.#maxInputBytes;
  }

  /** Records an inline run; false when it was too slow and the instance goes back to its thread for good. */
  recordInlineRun(runUs: number): boolean {
    this.#meanInlineRunUs += (runUs - this.#meanInlineRunUs) / 8;
    if (runUs <= SLOW_RUN_US && this.#meanInlineRunUs <= MAX_INLINE_RUN_US) return true;
    this.#isRetired = true;
    return false;
  }
}
