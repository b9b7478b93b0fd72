import type { ResponseCacheStatistics } from '../metrics/response-cache-statistics.js';

export const nowNs = (): number => Number(process.hrtime.bigint());

/** What every response cache store counts (lookups, hits, misses, failed insertions and their times), kept one way for the local and the redis store. */
export class CacheCounters {
  #lookupCount = 0;
  #hitCount = 0;
  #missCount = 0;
  #insertionFailureCount = 0;
  #lookupNs = 0;
  #insertionNs = 0;

  /** Counts a lookup as it starts; returns its start time for `endLookup`. */
  startLookup(): number {
    this.#lookupCount++;
    return nowNs();
  }

  endLookup(startNs: number, isHit: boolean): void {
    if (isHit) this.#hitCount++;
    else this.#missCount++;
    this.#lookupNs += nowNs() - startNs;
  }

  /** A lookup started at `startNs` (nowNs) and counted only once it found its entry (ResponseCache.lookupHit). */
  countHit(startNs: number): void {
    this.#lookupCount++;
    this.endLookup(startNs, true);
  }

  startInsertion(): number {
    return nowNs();
  }

  endInsertion(startNs: number): void {
    this.#insertionNs += nowNs() - startNs;
  }

  countInsertionFailure(): void {
    this.#insertionFailureCount++;
  }

  statistics(): Omit<ResponseCacheStatistics, 'store'> {
    return {
      lookupCount: this.#lookupCount,
      hitCount: this.#hitCount,
      missCount: this.#missCount,
      insertionFailureCount: this.#insertionFailureCount,
      lookupNs: this.#lookupNs,
      insertionNs: this.#insertionNs,
    };
  }
}
