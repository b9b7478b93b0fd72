/** The server-wide response cache's counters, as its global metrics (nv_cache_*) read them at each scrape. */
export interface ResponseCacheStatistics {
  readonly entryCount: number;
  readonly usedBytes: number;
  readonly sizeBytes: number;
  readonly lookupCount: number;
  readonly hitCount: number;
  readonly missCount: number;
  readonly evictionCount: number;
  /** Entries not stored because they were larger than the whole cache. */
  readonly insertionFailureCount: number;
  readonly lookupNs: number;
  readonly insertionNs: number;
}
