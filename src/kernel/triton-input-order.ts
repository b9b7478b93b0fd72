/*
 * The order in which Triton's core walks a request's inputs. It keeps them in a
 * std::unordered_map<std::string, Input> (core src/infer_request.h `original_inputs_`), filled in
 * request order, and every check of InferenceRequest::Normalize loops over that map, so when two
 * inputs are wrong Triton names the one its map yields first: for two inputs, the second one sent
 * (qa/L0_input_validation `test_input_string_shape_validation` expects 'INPUT1'). The map's order is
 * GCC libstdc++'s, which Triton is built with: std::hash<std::string> (murmur hash, libstdc++
 * hash_bytes.cc), prime bucket counts, each new node at the front of its bucket or of the whole list
 * (hashtable.h `_M_insert_bucket_begin`, `_M_rehash_aux`). Checked against libstdc++ itself by
 * test/fixtures/unordered_map_orders.json (scripts/generate_unordered_map_orders.cc).
 */

const MASK_64 = (1n << 64n) - 1n;
const MULTIPLIER = (0xc6a4a793n << 32n) + 0x5bd1e995n;
const SEED = 0xc70f6907n;

const shiftMix = (value: bigint): bigint => value ^ (value >> 47n);
const multiply = (a: bigint, b: bigint): bigint => (a * b) & MASK_64;

/** libstdc++'s std::hash<std::string> on a 64-bit target: std::_Hash_bytes(data, length, 0xc70f6907). */
export function hashString(text: string): bigint {
  const bytes = Buffer.from(text, 'utf8');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const aligned = bytes.byteLength & ~7;
  let hash = SEED ^ multiply(BigInt(bytes.byteLength), MULTIPLIER);
  for (let offset = 0; offset < aligned; offset += 8) {
    hash ^= multiply(shiftMix(multiply(view.getBigUint64(offset, true), MULTIPLIER)), MULTIPLIER);
    hash = multiply(hash, MULTIPLIER);
  }
  if (aligned < bytes.byteLength) {
    let tail = 0n;
    for (let index = bytes.byteLength - 1; index >= aligned; index--) tail = (tail << 8n) + BigInt(bytes[index]!);
    hash = multiply(hash ^ tail, MULTIPLIER);
  }
  return shiftMix(multiply(shiftMix(hash), MULTIPLIER));
}

/**
 * The bucket counts an unordered_map goes through as it grows (max_load_factor 1): 13 at the first
 * insertion, the next when an insertion would put more elements than buckets. Read from libstdc++;
 * the last covers 351,061 inputs, more than any model has (the input count is checked first).
 */
const BUCKET_COUNTS = [13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061];

const NO_NODE = -1;
/** A bucket's "node before its first node" is the list's head pointer (`_M_before_begin`). */
const BEFORE_BEGIN = -2;
const EMPTY_BUCKET = -3;

/**
 * The indexes of `names` (distinct) in the order a libstdc++ unordered_map yields them after they are
 * inserted in the order given.
 */
export function tritonInputOrder(names: readonly string[]): number[] {
  const hashes = names.map(hashString);
  const next = new Int32Array(names.length).fill(NO_NODE);
  let head = NO_NODE;
  let stage = 0;
  let buckets = new Int32Array(BUCKET_COUNTS[0]!).fill(EMPTY_BUCKET);
  const bucketOf = (node: number): number => Number(hashes[node]! % BigInt(buckets.length));
  /** Puts `node` at the front of `bucket`: after the bucket's before-node, or at the head of the list. */
  const insertAfter = (before: number, node: number): void => {
    if (before === BEFORE_BEGIN) {
      next[node] = head;
      head = node;
    } else {
      next[node] = next[before]!;
      next[before] = node;
    }
  };
  const rehash = (count: number): void => {
    buckets = new Int32Array(count).fill(EMPTY_BUCKET);
    let node = head;
    head = NO_NODE;
    let headBucket = 0;
    while (node !== NO_NODE) {
      const following = next[node]!;
      const bucket = bucketOf(node);
      if (buckets[bucket] === EMPTY_BUCKET) {
        insertAfter(BEFORE_BEGIN, node);
        buckets[bucket] = BEFORE_BEGIN;
        if (next[node] !== NO_NODE) buckets[headBucket] = node;
        headBucket = bucket;
      } else {
        insertAfter(buckets[bucket]!, node);
      }
      node = following;
    }
  };
  for (let node = 0; node < names.length; node++) {
    if (node + 1 > buckets.length && stage + 1 < BUCKET_COUNTS.length) rehash(BUCKET_COUNTS[++stage]!);
    const bucket = bucketOf(node);
    if (buckets[bucket] !== EMPTY_BUCKET) {
      insertAfter(buckets[bucket]!, node);
    } else {
      insertAfter(BEFORE_BEGIN, node);
      if (next[node] !== NO_NODE) buckets[bucketOf(next[node]!)] = node;
      buckets[bucket] = BEFORE_BEGIN;
    }
  }
  const order: number[] = [];
  for (let node = head; node !== NO_NODE; node = next[node]!) order.push(node);
  return order;
}
