/**
 * When an ONNX Runtime instance may run its model on the main thread, with no thread hop (issue 20).
 * A run there blocks the event loop for its whole duration, so only a model whose runs take some tens
 * of microseconds at most qualifies, and only for runs no bigger than the ones it was measured on:
 *
 * - every instance starts on its execution thread; once the median of a window of WINDOW_RUNS runs
 *   there is at most MAX_INLINE_RUN_US and nine in ten took at most SLOW_RUN_US, it may run inline
 *   executions of at most the input bytes seen in that window (a window that fails is followed by
 *   another: medians and deciles, because a busy machine preempts a run now and then);
 * - inline, a window of INLINE_WINDOW_RUNS whose median is past the leave limit, or two runs in a row
 *   past MAX_SINGLE_RUN_US (far past; and one alone is a preempted or garbage-collected run, not the
 *   model's: on a loaded machine a run of 13 µs measured 17 and 25 ms now and then), sends the
 *   instance back to its thread for good: a model whose run time grows is not one to gamble the event
 *   loop on. The first INLINE_WARMUP_RUNS inline runs are not judged: a new session's first runs
 *   allocate and take milliseconds.
 *
 * The leave limit is a hysteresis: at least twice the limit to qualify (MAX_INLINE_MEDIAN_US), so that
 * a model near it does not qualify and then leave on the same noise, and up to the median round trip
 * through the thread measured in the qualifying window (capped at MAX_LEAVE_MEDIAN_US): on a loaded
 * machine every run is preempted and slower, inline or not, and a run that blocks the loop for less
 * than the hop it saves still costs the other requests less than the hop would.
 *
 * The run times on both sides are the synchronous native call alone (sync-session.ts), not the wait for
 * an event-loop turn. bench/channel.ts measured the hop it saves at about 15 µs of a 35 µs round trip
 * for a 16-value identity; on a VM whose idle cores are slow to wake, far more (docs/benchmarks.md,
 * "The hot path").
 */
export const MAX_INLINE_RUN_US = 50;
export const MAX_INLINE_MEDIAN_US = 2 * MAX_INLINE_RUN_US;
export const MAX_LEAVE_MEDIAN_US = 1000;
export const SLOW_RUN_US = 200;
export const MAX_SINGLE_RUN_US = 5000;
export const WINDOW_RUNS = 64;
const INLINE_WINDOW_RUNS = 16;
export const INLINE_WARMUP_RUNS = 4;

/** What OrtInstance asks of the guard (tests give it another policy). */
export interface InlinePolicy {
  /** A run on the execution thread: its run time, its input bytes, and the whole round trip to the thread and back. */
  recordThreadRun(runUs: number, inputBytes: number, roundTripUs: number): boolean;
  allows(inputBytes: number): boolean;
  recordInlineRun(runUs: number): boolean;
}

const medianOf = (values: number[]): number => values.sort((a, b) => a - b)[values.length >> 1]!;

export class InlineGuard implements InlinePolicy {
  #window: number[] = [];
  #roundTrips: number[] = [];
  #windowMaxInputBytes = 0;
  #maxInputBytes = -1;
  #leaveMedianUs = MAX_INLINE_MEDIAN_US;
  #isRetired = false;
  #inlineRuns = 0;
  #wasLastRunStuck = false;

  /** Records a run on the execution thread; true once the instance qualifies (the first time only). */
  recordThreadRun(runUs: number, inputBytes: number, roundTripUs: number): boolean {
    if (this.#isRetired || this.#maxInputBytes >= 0) return false;
    this.#window.push(runUs);
    this.#roundTrips.push(roundTripUs);
    this.#windowMaxInputBytes = Math.max(this.#windowMaxInputBytes, inputBytes);
    if (this.#window.length < WINDOW_RUNS) return false;
    const sorted = this.#window.sort((a, b) => a - b);
    const qualifies = sorted[WINDOW_RUNS >> 1]! <= MAX_INLINE_RUN_US && sorted[Math.floor(WINDOW_RUNS * 0.9)]! <= SLOW_RUN_US;
    if (qualifies) {
      this.#maxInputBytes = this.#windowMaxInputBytes;
      this.#leaveMedianUs = Math.min(MAX_LEAVE_MEDIAN_US, Math.max(MAX_INLINE_MEDIAN_US, medianOf(this.#roundTrips)));
    }
    this.#window = [];
    this.#roundTrips = [];
    this.#windowMaxInputBytes = 0;
    return qualifies;
  }

  /** Whether an execution of `inputBytes` may run inline now. */
  allows(inputBytes: number): boolean {
    return !this.#isRetired && inputBytes <= this.#maxInputBytes;
  }

  /** The median inline run time past which the instance goes back to its thread. */
  get leaveMedianUs(): number {
    return this.#leaveMedianUs;
  }

  /** Records how long an inline run blocked the event loop; false when the instance goes back to its thread for good. */
  recordInlineRun(runUs: number): boolean {
    if (++this.#inlineRuns <= INLINE_WARMUP_RUNS) return true;
    const isStuck = runUs > MAX_SINGLE_RUN_US;
    if (isStuck && this.#wasLastRunStuck) return this.#retire();
    this.#wasLastRunStuck = isStuck;
    this.#window.push(runUs);
    if (this.#window.length < INLINE_WINDOW_RUNS) return true;
    const median = medianOf(this.#window);
    this.#window = [];
    return median <= this.#leaveMedianUs || this.#retire();
  }

  #retire(): false {
    this.#isRetired = true;
    this.#maxInputBytes = -1;
    return false;
  }
}
