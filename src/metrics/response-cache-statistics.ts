/** The server-wide response cache's counters, as its global metrics (nv_cache_*) read them at each scrape. */
export interface ResponseCacheStatistics {
  readonly lookupCount: number;
  readonly hitCount: number;
  readonly missCount: number;
  /** Responses not stored: larger than the whole local cache, or refused by Redis (down, out of memory). */
  readonly insertionFailureCount: number;
  readonly lookupNs: number;
  readonly insertionNs: number;
  /** What the local cache holds; absent for Redis, whose server keeps and evicts the entries. */
  readonly store?: {
    readonly entryCount: number;
    readonly usedBytes: number;
    readonly sizeBytes: number;
    readonly evictionCount: number;
  };
}
