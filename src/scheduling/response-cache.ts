import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { withResponseMemo } from '../kernel/response-memo.js';
import { responseParametersOf, withResponseParameters } from '../kernel/response-parameters.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ResponseCacheStatistics } from '../metrics/response-cache-statistics.js';
import { type BytesElements, type FixedSizeArray, serializedByteLength } from '../protocol/tensor-data.js';
import { CacheCounters, nowNs } from './cache-counters.js';

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
  /**
   * `lookup` in the caller's step, for a caller that goes on to `lookup` when it misses: the outputs
   * stored under `key`, counted as a lookup and a hit; on a miss, undefined and nothing counted.
   * Absent where a lookup must wait (Redis).
   */
  lookupHit?(key: string): readonly Tensor[] | undefined;
  /** Stores the outputs under `key`; never rejects: a failure is counted and reported in the outcome. */
  insert(key: string, outputs: readonly Tensor[]): InsertOutcome | Promise<InsertOutcome>;
  statistics(): ResponseCacheStatistics;
  close(): Promise<void>;
}

interface Entry {
  readonly outputs: readonly Tensor[];
  readonly bytes: number;
}


/**
 * The bytes an entry takes: the response as Triton's core serializes it for its cache (src/cache_entry.cc
 * SerializeResponse): a uint32 count of outputs, then per output a uint64 size, its name, data type and
 * shape each behind a uint32 length, and its data behind a uint64 length (BYTES in the serialized layout).
 */
export function responseByteSize(outputs: readonly Tensor[]): number {
  let total = 4;
  for (const output of outputs) {
    const data = output.dataType === 'BYTES' ? serializedByteLength(output.data as BytesElements) : (output.data as FixedSizeArray).byteLength;
    total += 8 + 4 + Buffer.byteLength(output.name) + 4 + output.dataType.length + 4 + 8 * output.shape.length + 8 + data;
  }
  return total;
}

/** A key as a log line shows it: a digest as it is; an exact key (raw input bytes, cache-key.ts) by its SHA-256. */
function printableKey(key: string): string {
  return /^[0-9a-f]{64}$/.test(key) ? key : createHash('sha256').update(key).digest('hex');
}

export interface ResponseCacheOptions {
  /** Told of each response that could not be stored, in Triton's words (the request is answered all the same). */
  readonly onInsertFailure?: (message: string) => void;
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
 * evicting the least recently used entries until a new one fits. An entry counts the bytes of the
 * response as Triton serializes it (responseByteSize); one larger than the whole cache is not stored,
 * counted, and told to `onInsertFailure`, and the request never sees it.
 * NOTE: the recency order is lru-cache's linked list. A Map kept in order by deleting and setting an
 * entry on every hit cost 60 µs a hit with 20,000 entries (V8 rehashes a Map whose slots the deleted
 * entries fill), and a stream with fresh requests among its repeats soon holds that many
 * (docs/benchmarks.md, "The response cache").
 */
export class ResponseCache implements ResponseCacheStore {
  readonly isShared = false;
  readonly sizeBytes: number;
  readonly #entries: LRUCache<string, Entry>;
  readonly #counters = new CacheCounters();
  #usedBytes = 0;
  #evictionCount = 0;

  readonly #onInsertFailure: (message: string) => void;

  constructor(sizeBytes: number, options: ResponseCacheOptions = {}) {
    this.sizeBytes = sizeBytes;
    this.#onInsertFailure = options.onInsertFailure ?? (() => {});
    this.#entries = new LRUCache<string, Entry>({
      // lru-cache's sizes are positive: an entry of no bytes takes one unit.
      maxSize: Math.max(1, sizeBytes),
      sizeCalculation: (entry) => Math.max(1, entry.bytes),
      dispose: (entry, _key, reason) => {
        this.#usedBytes -= entry.bytes;
        if (reason === 'evict') this.#evictionCount++;
      },
    });
  }

  /** The outputs stored under `key` (read-only: shared by every hit), or undefined on a miss. */
  lookup(key: string): readonly Tensor[] | undefined {
    const startNs = this.#counters.startLookup();
    const entry = this.#entries.get(key);
    this.#counters.endLookup(startNs, entry !== undefined);
    return entry?.outputs;
  }

  lookupHit(key: string): readonly Tensor[] | undefined {
    const startNs = nowNs();
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#counters.countHit(startNs);
    return entry.outputs;
  }

  /** Stores a copy of the outputs under `key`, evicting the least recently used entries to make room. */
  insert(key: string, outputs: readonly Tensor[]): InsertOutcome {
    const startNs = this.#counters.startInsertion();
    try {
      if (this.#entries.has(key)) return 'present';
      const bytes = responseByteSize(outputs);
      if (bytes > this.sizeBytes) {
        this.#counters.countInsertionFailure();
        // Triton's core logs the local cache's refusal (dynamic_batch_scheduler.cc, local_cache Allocate).
        this.#onInsertFailure(
          `Failed to insert key [${printableKey(key)}] into response cache: Requested byte_size: ${bytes} is greater than total cache size: ${this.sizeBytes}`,
        );
        return 'failed';
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
    return [...this.#entries.rkeys()];
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
