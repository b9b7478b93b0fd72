import { withResponseMemo } from '../kernel/response-memo.js';
import { responseParametersOf, withResponseParameters } from '../kernel/response-parameters.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ResponseCacheStatistics } from '../metrics/response-cache-statistics.js';
import { type BytesElements, type FixedSizeArray, serializedByteLength } from '../protocol/tensor-data.js';
import { CacheCounters } from './cache-counters.js';

/** What `insert` did: stored the entry, found it already stored, or could not store it (larger than the cache, Redis down). */
export type InsertOutcome = 'inserted' | 'present' | 'failed';

/**
 * Where responses are cached: Triton's `local` cache (ResponseCache, here) or its `redis` cache
 * (redis-cache.ts). One serves the whole server; the CachingScheduler of each model asks it.
 */
export interface ResponseCacheStore {
  /**
   * Whether other servers, and this one after a restart, read the same entries (Redis): keys may then
   * hold nothing particular to this process, such as the load of a model (see responseCacheKey).
   */
  readonly isShared: boolean;
  /** The outputs stored under `key`, or undefined on a miss (and when the store cannot be reached). */
  lookup(key: string): readonly Tensor[] | undefined | Promise<readonly Tensor[] | undefined>;
  /** Stores the outputs under `key`; never rejects: a failure is counted and reported in the outcome. */
  insert(key: string, outputs: readonly Tensor[]): InsertOutcome | Promise<InsertOutcome>;
  statistics(): ResponseCacheStatistics;
  close(): Promise<void>;
}

interface Entry {
  readonly outputs: readonly Tensor[];
  readonly bytes: number;
}


/** The bytes an entry holds: its output tensors' data, BYTES counted in Triton's serialized layout. */
export function outputByteSize(outputs: readonly Tensor[]): number {
  let total = 0;
  for (const output of outputs) {
    total += output.dataType === 'BYTES' ? serializedByteLength(output.data as BytesElements) : (output.data as FixedSizeArray).byteLength;
  }
  return total;
}

/**
 * A copy of the outputs that owns its data (a backend may reuse its buffers once the request is
 * answered), marked with the response parameters the model set, which every hit answers with, and
 * given the memo in which the front ends keep its encoded forms.
 */
function copyOutputs(outputs: readonly Tensor[]): readonly Tensor[] {
  const copy = outputs.map((output) => ({
    ...output,
    data: output.dataType === 'BYTES' ? (output.data as BytesElements).map((element) => element.slice()) : (output.data as FixedSizeArray).slice(),
  }));
  return withResponseMemo(withResponseParameters(copy, responseParametersOf(outputs)));
}

/**
 * Triton's `local` response cache (triton-inference-server/local_cache): one store of `sizeBytes`
 * shared by every model, holding the outputs of successful requests by their key (cache-key.ts) and
 * evicting the least recently used entries until a new one fits. An entry counts the bytes of its
 * output tensors, as Triton's does; one larger than the whole cache is not stored ("Cache entry is
 * larger than total cache size"), which the caller counts and the request never sees.
 *
 *   #entries (a Map keeps insertion order): least recently used → ... → most recently used
 *   lookup hit: delete + set moves the entry to the end; insert: evict from the front until it fits
 */
export class ResponseCache implements ResponseCacheStore {
  readonly isShared = false;
  readonly sizeBytes: number;
  readonly #entries = new Map<string, Entry>();
  readonly #counters = new CacheCounters();
  #usedBytes = 0;
  #evictionCount = 0;

  constructor(sizeBytes: number) {
    this.sizeBytes = sizeBytes;
  }

  /** The outputs stored under `key` (read-only: shared by every hit), or undefined on a miss. */
  lookup(key: string): readonly Tensor[] | undefined {
    const startNs = this.#counters.startLookup();
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    this.#counters.endLookup(startNs, entry !== undefined);
    return entry?.outputs;
  }

  /** Stores a copy of the outputs under `key`, evicting the least recently used entries to make room. */
  insert(key: string, outputs: readonly Tensor[]): InsertOutcome {
    const startNs = this.#counters.startInsertion();
    try {
      if (this.#entries.has(key)) return 'present';
      const bytes = outputByteSize(outputs);
      if (bytes > this.sizeBytes) {
        this.#counters.countInsertionFailure();
        return 'failed';
      }
      for (const [oldest, entry] of this.#entries) {
        if (this.#usedBytes + bytes <= this.sizeBytes) break;
        this.#entries.delete(oldest);
        this.#usedBytes -= entry.bytes;
        this.#evictionCount++;
      }
      this.#entries.set(key, { outputs: copyOutputs(outputs), bytes });
      this.#usedBytes += bytes;
      return 'inserted';
    } finally {
      this.#counters.endInsertion(startNs);
    }
  }

  /** The keys from least to most recently used (for tests and debugging). */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  statistics(): ResponseCacheStatistics {
    return {
      ...this.#counters.statistics(),
      store: { entryCount: this.#entries.size, usedBytes: this.#usedBytes, sizeBytes: this.sizeBytes, evictionCount: this.#evictionCount },
    };
  }

  async close(): Promise<void> {
    this.#entries.clear();
    this.#usedBytes = 0;
  }
}
