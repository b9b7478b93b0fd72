import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestDistribution } from './perf-options.js';
import { type Random, exponentialGapMs } from './random.js';

/** Sends one inference request; resolves when its answer is complete, rejects when it failed. */
export type SendRequest = () => Promise<void>;

/** Counts that grow while a window runs, for the progress display. */
export interface LiveCounts {
  completed: number;
  failed: number;
}

/** What one measurement window saw from the client's side. */
export interface WindowSamples {
  /**
   * The time the throughput is taken over: from the first request sent to the last answer received
   * (closed loop), or the answers' span (open loop); see the two window functions.
   */
  readonly durationMs: number;
  /** From the window's start to its last request sent: the requests' send rate is taken over it. */
  readonly sendSpanMs: number;
  /** Latency of each successful request, in microseconds, in completion order. */
  readonly latenciesUs: readonly number[];
  readonly sentCount: number;
  readonly failedCount: number;
  /** The first failure's message, when any request failed. */
  readonly firstError: string | undefined;
  /** Request-rate windows: how late requests left after their scheduled time, on average, in microseconds. */
  readonly averageSendLagUs: number | undefined;
}

class SampleRecorder {
  readonly latenciesUs: number[] = [];
  sentCount = 0;
  failedCount = 0;
  firstError: string | undefined;
  lastSendMs = 0;
  firstAnswerMs = Number.POSITIVE_INFINITY;
  lastAnswerMs = 0;

  readonly #live: LiveCounts;

  constructor(live: LiveCounts) {
    this.#live = live;
  }

  /** Sends one request and records how it went; never rejects. */
  async run(send: SendRequest): Promise<void> {
    this.sentCount++;
    const startMs = performance.now();
    this.lastSendMs = startMs;
    try {
      await send();
      const endMs = performance.now();
      this.latenciesUs.push((endMs - startMs) * 1000);
      this.firstAnswerMs = Math.min(this.firstAnswerMs, endMs);
      this.lastAnswerMs = endMs;
      this.#live.completed++;
    } catch (error) {
      this.failedCount++;
      this.#live.failed++;
      this.firstError ??= error instanceof Error ? error.message : String(error);
    }
  }
}

/**
 * Closed loop: `concurrency` requests in flight, each sent as soon as the one before it on its slot is
 * answered, until `durationMs` has passed; then the window drains (no new request, every sent one
 * answered). NOTE: draining is what makes a window's counts exact: every request it sent has been
 * counted by the server before the statistics are read again, so the tool's count and the server's
 * agree to the request. It adds a ramp-down of about one latency, taken over with the requests sent in
 * the last latency before the end (about `concurrency` of them), so the throughput stays unbiased.
 */
export async function runConcurrencyWindow({ send, concurrency, durationMs, live }: WindowOptions & { readonly concurrency: number }): Promise<WindowSamples> {
  const recorder = new SampleRecorder(live);
  const startMs = performance.now();
  const endMs = startMs + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < endMs) await recorder.run(send);
    }),
  );
  return { ...recorderResult(recorder, startMs), durationMs: performance.now() - startMs, averageSendLagUs: undefined };
}

/** What every window takes. */
export interface WindowOptions {
  readonly send: SendRequest;
  readonly durationMs: number;
  /** Updated as answers arrive. */
  readonly live: LiveCounts;
}

export interface RequestRate {
  readonly ratePerSec: number;
  readonly distribution: RequestDistribution;
  readonly random: Random;
}

/**
 * Open loop: requests leave on a schedule of `ratePerSec` (constant gaps, or exponential gaps for
 * Poisson arrivals) whether or not earlier ones were answered, for `durationMs`; then the window
 * drains as in runConcurrencyWindow. The throughput is taken over the span of the answers (at least
 * `durationMs`), not from the first send: the answers start one latency after the sends, and what a
 * server that keeps up answers in that span is the rate offered; one that does not keep up stretches
 * it. NOTE: a timer cannot wake more often than every millisecond or so; at higher rates the requests
 * that fell due meanwhile leave together, and the lag behind their scheduled times is reported.
 */
export async function runRequestRateWindow({ send, rate, durationMs, live }: WindowOptions & { readonly rate: RequestRate }): Promise<WindowSamples> {
  const recorder = new SampleRecorder(live);
  const inFlight = new Set<Promise<void>>();
  const startMs = performance.now();
  const endMs = startMs + durationMs;
  const gapMs = (): number => (rate.distribution === 'constant' ? 1000 / rate.ratePerSec : exponentialGapMs(rate.random, rate.ratePerSec));
  let dueMs = startMs + (rate.distribution === 'poisson' ? gapMs() : 0);
  let lagMsTotal = 0;
  while (dueMs < endMs) {
    const waitMs = dueMs - performance.now();
    if (waitMs > 0) await sleep(waitMs);
    const nowMs = performance.now();
    while (dueMs <= nowMs && dueMs < endMs) {
      lagMsTotal += nowMs - dueMs;
      const request = recorder.run(send);
      inFlight.add(request);
      void request.then(() => inFlight.delete(request));
      dueMs += gapMs();
    }
  }
  await Promise.all(inFlight);
  const answerSpanMs = recorder.lastAnswerMs - recorder.firstAnswerMs;
  return {
    ...recorderResult(recorder, startMs),
    durationMs: Math.max(durationMs, Number.isFinite(answerSpanMs) ? answerSpanMs : 0),
    averageSendLagUs: recorder.sentCount > 0 ? (lagMsTotal / recorder.sentCount) * 1000 : 0,
  };
}

function recorderResult(recorder: SampleRecorder, startMs: number): Omit<WindowSamples, 'durationMs' | 'averageSendLagUs'> {
  return {
    latenciesUs: recorder.latenciesUs,
    sentCount: recorder.sentCount,
    failedCount: recorder.failedCount,
    firstError: recorder.firstError,
    sendSpanMs: recorder.sentCount > 0 ? recorder.lastSendMs - startMs : 0,
  };
}
