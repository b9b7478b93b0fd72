/**
 * When an ONNX Runtime instance may run its model on the main thread, with no thread hop (issue 20).
 * A run there blocks the event loop for its whole duration, so only a model that computes for some
 * tens of microseconds at most qualifies, and only for runs no bigger than the ones it was measured on.
 * A run's time is the synchronous native call alone (sync-session.ts), on the thread or inline; on a
 * loaded machine it also holds the time the thread was preempted, which says nothing of the model. So:
 *
 * - what the model computes is read from the fastest tenth of a window's runs (preemption only ever
 *   adds time): at most MAX_INLINE_RUN_US to qualify, past MAX_INLINE_P10_US (twice that: a
 *   hysteresis, so that a model near the limit does not qualify and then leave on the same noise)
 *   to leave;
 * - how long the event loop would be held is read from the median, which must stay within the leave
 *   limit: the median round trip through the thread measured in the qualifying window, bounded to
 *   [MAX_INLINE_P10_US, MAX_LEAVE_MEDIAN_US]. On a loaded machine every run is slower, inline or not,
 *   and a run that holds the loop for less than the hop it saves costs the other requests less than
 *   the hop would.
 *
 * Every instance starts on its execution thread; a window of WINDOW_RUNS runs there that passes both
 * lets it run inline the executions no bigger than the biggest that ran within MAX_INLINE_P10_US in
 * that window, or than any bigger one that later runs on the thread within MAX_INLINE_RUN_US (so that
 * with dynamic batching the small batches may run inline and the big ones stay on the thread; a window
 * that fails is followed by another). Inline, a window of INLINE_WINDOW_RUNS that
 * fails either, or two runs in a row past MAX_SINGLE_RUN_US (one alone is a preempted or
 * garbage-collected run: on a machine with a load average of 17 on 2 cores a run of 13 µs measured 17
 * and 25 ms now and then), sends it back to its thread: a model whose run time grows is not one to
 * gamble the event loop on. The first INLINE_WARMUP_RUNS inline runs are not judged: a new session's
 * first runs allocate and take milliseconds.
 *
 * Back on its thread, the instance is measured again, and comes back inline once as many windows in a
 * row pass as twice the previous time (2 after its first return to the thread, then 4, 8..., at most
 * MAX_REQUALIFY_WINDOWS): a burst of load sends a tiny model to its thread only until its runs read
 * fast again, and a model that keeps flipping spends ever longer on its thread between stays. A model
 * whose runs grew fails its windows there and stays.
 *
 * bench/channel.ts measured the hop it saves at about 15 µs of a 35 µs round trip for a 16-value
 * identity; on a VM whose idle cores are slow to wake, far more (docs/benchmarks.md, "The hot path").
 */
export const MAX_INLINE_RUN_US = 50;
export const MAX_INLINE_P10_US = 2 * MAX_INLINE_RUN_US;
export const MAX_LEAVE_MEDIAN_US = 1000;
export const MAX_SINGLE_RUN_US = 5000;
export const WINDOW_RUNS = 64;
const INLINE_WINDOW_RUNS = 16;
export const INLINE_WARMUP_RUNS = 4;
export const MAX_REQUALIFY_WINDOWS = 64;

/** What OrtInstance asks of the guard (tests give it another policy). */
export interface InlinePolicy {
  /** A run on the execution thread: its run time, its input bytes, and the whole round trip to the thread and back. */
  recordThreadRun(runUs: number, inputBytes: number, roundTripUs: number): boolean;
  allows(inputBytes: number): boolean;
  recordInlineRun(runUs: number): boolean;
}

/**
 * For an instance fed by a dynamic batcher, unless its config says `inline_batches` (onnxruntime-backend.ts):
 * its batches compute on the thread while the main thread gathers the next (the MLP with dynamic
 * batching at queue delay 0 fell to 0.44 of the build that ran nothing inline once its small batches
 * ran at once, and to 0.69 at 8 clients with each inline batch started in the check phase).
 */
export const NEVER_INLINE: InlinePolicy = { recordThreadRun: () => false, allows: () => false, recordInlineRun: () => false };

/** The fastest tenth's upper bound and the median of a window (sorted in place). */
function summaryOf(window: number[]): { readonly p10: number; readonly median: number } {
  window.sort((a, b) => a - b);
  return { p10: window[Math.floor(window.length / 10)]!, median: window[window.length >> 1]! };
}

const medianOf = (values: number[]): number => summaryOf(values).median;

export class InlineGuard implements InlinePolicy {
  #window: number[] = [];
  #roundTrips: number[] = [];
  #windowMaxInputBytes = 0;
  /** The largest fast execution of the passing windows in a row so far. */
  #passedMaxInputBytes = 0;
  #passedWindows = 0;
  /** Passing windows in a row needed to run inline (again). */
  #windowsToPass = 1;
  #maxInputBytes = -1;
  #leaveMedianUs = MAX_INLINE_P10_US;
  #inlineRuns = 0;
  #wasLastRunStuck = false;
  #wasLastWindowSlow = false;

  /** Records a run on the execution thread; true when the instance (re)qualifies to run inline. */
  recordThreadRun(runUs: number, inputBytes: number, roundTripUs: number): boolean {
    if (this.#maxInputBytes >= 0) {
      // A bigger execution than those let inline, run on the thread as fast as the model must compute
      // to qualify (preemption only ever adds time): executions that big may run inline too.
      if (runUs <= MAX_INLINE_RUN_US) this.#maxInputBytes = Math.max(this.#maxInputBytes, inputBytes);
      return false;
    }
    this.#window.push(runUs);
    this.#roundTrips.push(roundTripUs);
    if (runUs <= MAX_INLINE_P10_US) this.#windowMaxInputBytes = Math.max(this.#windowMaxInputBytes, inputBytes);
    if (this.#window.length < WINDOW_RUNS) return false;
    const leaveMedianUs = Math.min(MAX_LEAVE_MEDIAN_US, Math.max(MAX_INLINE_P10_US, medianOf(this.#roundTrips)));
    const { p10, median } = summaryOf(this.#window);
    if (p10 <= MAX_INLINE_RUN_US && median <= leaveMedianUs) {
      this.#passedWindows++;
      this.#passedMaxInputBytes = Math.max(this.#passedMaxInputBytes, this.#windowMaxInputBytes);
    } else {
      this.#passedWindows = 0;
      this.#passedMaxInputBytes = 0;
    }
    this.#window = [];
    this.#roundTrips = [];
    this.#windowMaxInputBytes = 0;
    if (this.#passedWindows < this.#windowsToPass) return false;
    this.#maxInputBytes = this.#passedMaxInputBytes;
    this.#leaveMedianUs = leaveMedianUs;
    this.#passedWindows = 0;
    this.#passedMaxInputBytes = 0;
    this.#wasLastRunStuck = false;
    this.#wasLastWindowSlow = false;
    return true;
  }

  /** Whether an execution of `inputBytes` may run inline now. */
  allows(inputBytes: number): boolean {
    return inputBytes <= this.#maxInputBytes;
  }

  /** The median inline run time past which the instance goes back to its thread. */
  get leaveMedianUs(): number {
    return this.#leaveMedianUs;
  }

  /** Records how long an inline run blocked the event loop; false when the instance goes back to its thread. */
  recordInlineRun(runUs: number): boolean {
    if (++this.#inlineRuns <= INLINE_WARMUP_RUNS) return true;
    const isStuck = runUs > MAX_SINGLE_RUN_US;
    if (isStuck && this.#wasLastRunStuck) return this.#leave();
    this.#wasLastRunStuck = isStuck;
    this.#window.push(runUs);
    if (this.#window.length < INLINE_WINDOW_RUNS) return true;
    const { p10, median } = summaryOf(this.#window);
    this.#window = [];
    const isSlow = p10 > MAX_INLINE_P10_US || median > this.#leaveMedianUs;
    if (isSlow && this.#wasLastWindowSlow) return this.#leave();
    this.#wasLastWindowSlow = isSlow;
    return true;
  }

  /** Back to the thread, to be measured there again, with twice the passing windows in a row asked of it. */
  #leave(): false {
    this.#maxInputBytes = -1;
    this.#window = [];
    this.#windowsToPass = Math.min(MAX_REQUALIFY_WINDOWS, this.#windowsToPass * 2);
    return false;
  }
}
