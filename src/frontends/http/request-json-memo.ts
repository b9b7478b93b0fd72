import type { JsonValue } from '../../protocol/json-body.js';
import { parseRequestJson } from './request-json.js';

/** Headers longer than this are parsed every time (a JSON tensor's data makes them long and unlikely to repeat). */
const MAX_REMEMBERED_CHARS = 4096;
/** How many header texts are remembered at once; the memo starts over when full. */
const MAX_REMEMBERED = 64;

const remembered = new Map<string, JsonValue>();

function deepFreeze(value: JsonValue): JsonValue {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/**
 * parseRequestJson for an inference request's JSON header, remembering the last texts parsed: a client
 * sends the same header with every request of the same shapes and parameters (tritonclient, perf_analyzer
 * and wrk all do), and its parse was a tenth of the main thread's work on an unbatched request
 * (docs/benchmarks.md, "The hot path"). The value is frozen, as it is shared: a reader that tried to
 * change it would throw instead of changing another request's.
 */
export function parseRequestJsonRemembered(text: string, what: string): JsonValue {
  if (text.length > MAX_REMEMBERED_CHARS) return parseRequestJson(text, what);
  let value = remembered.get(text);
  if (value === undefined) {
    value = deepFreeze(parseRequestJson(text, what));
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(text, value);
  }
  return value;
}
