import { NereidError } from '../kernel/errors.js';

/** How long requests for a model whose load on demand failed get that failure at once, without a new load. */
export const LOAD_RETRY_BACKOFF_MS = 1000;

/**
 * The loads on demand that failed lately, by model. Without it every request for a model whose load
 * fails (a bad config, a broken file) starts a load of its own once the previous one has failed: with
 * eight clients asking, loads run back to back, each reading the folder, parsing the config and
 * perhaps starting instances, and each logging its failure. For `LOAD_RETRY_BACKOFF_MS` after a
 * failure, requests get its error instead; the first request after that tries again.
 *
 * A load refused for want of room (UNAVAILABLE: --max-loaded-models or --model-memory-budget with
 * nothing idle to evict) is not remembered: it cost nothing, and a model going idle may make room a
 * moment later.
 */
export class LoadFailureBackoff {
  readonly #nowMs: () => number;
  readonly #failures = new Map<string, { readonly error: unknown; readonly untilMs: number }>();

  constructor(nowMs: () => number) {
    this.#nowMs = nowMs;
  }

  /** Remembers a failed load of `name`, unless it was refused for want of room. */
  record(name: string, error: unknown): void {
    if (error instanceof NereidError && error.status === 'UNAVAILABLE') return;
    this.#failures.set(name, { error, untilMs: this.#nowMs() + LOAD_RETRY_BACKOFF_MS });
  }

  /** The error of a load of `name` that failed less than LOAD_RETRY_BACKOFF_MS ago, or undefined. */
  recentFailure(name: string): unknown {
    const failure = this.#failures.get(name);
    if (failure === undefined) return undefined;
    if (this.#nowMs() < failure.untilMs) return failure.error;
    this.#failures.delete(name);
    return undefined;
  }

  /** Forgets `name`'s failure: its files changed, or it loaded another way, so the next request tries again. */
  forget(name: string): void {
    this.#failures.delete(name);
  }
}
