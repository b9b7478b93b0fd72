import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { rapidJsonError } from './rapidjson-error.js';
/** A parsed JSON value; integers beyond 2^53 as bigints (see parseJsonBody). */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

/** A run of 16 or more digits: the only way an integer beyond 2^53 can appear in the text. */
const LONG_DIGIT_RUN = /\d{16}/;
const INTEGER = /^-?\d+$/;
/**
 * Stands for a bare NaN once the text is rewritten for the lossless parser; no JSON writer spells
 * zero this way. Infinity needs no marker: 1e999 parses as Infinity.
 */
const NAN_MARKER = '-0e-7357';
const NON_FINITE = /-?Infinity|NaN/y;

function parseNumber(text: string): number | bigint {
  if (text === NAN_MARKER) return Number.NaN;
  if (INTEGER.test(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  }
  return Number(text);
}

/**
 * Rewrites bare NaN, Infinity and -Infinity outside string literals as numbers the lossless parser
 * reads back as such. Python's json and rapidjson (tritonclient) write these tokens for non-finite
 * floats, and Triton's parser accepts them (kParseNanAndInfFlag).
 */
function rewriteNonFinite(text: string): string | undefined {
  let out = '';
  let copied = 0;
  let isInString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (isInString) {
      if (char === '\\') i++;
      else if (char === '"') isInString = false;
    } else if (char === '"') {
      isInString = true;
    } else if (char === 'N' || char === 'I' || char === '-') {
      NON_FINITE.lastIndex = i;
      const match = NON_FINITE.exec(text);
      if (match === null) continue;
      const token = match[0];
      out += text.slice(copied, i) + (token === 'NaN' ? NAN_MARKER : token.startsWith('-') ? '-1e999' : '1e999');
      i += token.length - 1;
      copied = i + 1;
    }
  }
  return copied === 0 ? undefined : out + text.slice(copied);
}

/** A body that cannot be parsed; the message starts with Triton's `failed to parse the request JSON buffer: `. */
export class JsonBodyError extends Error {
  constructor(reason: string) {
    super(`failed to parse the request JSON buffer: ${reason}`);
    this.name = 'JsonBodyError';
  }

  /**
   * Text that is not JSON: RapidJSON's message and offset, as Triton answers (rapidjson-error.ts), then
   * what failed to parse; where RapidJSON would have taken the text, the JavaScript parser's reason.
   */
  static notJson(text: string, what: string, reason: string): JsonBodyError {
    return JsonBodyError.rapid(text, what) ?? new JsonBodyError(`the ${what} is not JSON: ${reason}`);
  }

  /** RapidJSON's error for the text, if it has one: its message and offset, then what failed to parse. */
  static rapid(text: string, what: string): JsonBodyError | undefined {
    const rapid = rapidJsonError(text);
    return rapid === undefined ? undefined : new JsonBodyError(`${rapid.message} at ${rapid.offset} (the ${what} is not JSON)`);
  }
}

function parseLosslessOrFail(text: string, original: string, what: string): JsonValue {
  try {
    return parseLossless(text, null, parseNumber) as JsonValue;
  } catch (error) {
    throw JsonBodyError.notJson(original, what, (error as Error).message);
  }
}

/**
 * How deep arrays and objects may nest. JSON.parse, the lossless parser, Array.prototype.flat and
 * JSON.stringify all recurse, and 10,000 levels overflow the stack; a tensor nests one level per
 * dimension, so 128 leaves room for any real request.
 */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether the text holds more than MAX_JSON_DEPTH opening brackets at all (native searches, no per-character loop). */
function hasManyBrackets(text: string): boolean {
  let count = 0;
  for (const bracket of ['[', '{']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) {
      if (++count > MAX_JSON_DEPTH) return true;
    }
  }
  return false;
}

/** The index of the first bracket that opens level MAX_JSON_DEPTH + 1 outside strings, or -1: one pass, no recursion. */
export function tooDeepAt(text: string): number {
  if (!hasManyBrackets(text)) return -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      for (i = text.indexOf('"', i + 1); i !== -1; i = text.indexOf('"', i + 1)) {
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      if (i === -1) return -1;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > MAX_JSON_DEPTH) return i;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return -1;
}

/**
 * Parses a JSON body so that integers beyond 2^53 (INT64/UINT64 tensor data, int64 parameters) come
 * back as exact BigInts, and bare NaN/Infinity as numbers. NOTE: the lossless parser is about 4x slower
 * than JSON.parse, so it runs only when the text needs it: a long digit run, or a failed fast parse.
 * Throws a JsonBodyError for text that is not JSON or nests deeper than MAX_JSON_DEPTH.
 */
export function parseJsonBody(text: string, what: string): JsonValue {
  const deepAt = tooDeepAt(text);
  if (deepAt !== -1) {
    // RapidJSON's own error comes first, where the text has one (the scan is iterative: no depth overflows it).
    throw JsonBodyError.rapid(text, what) ??
      new JsonBodyError(`arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels (at character ${deepAt}) in the ${what}`);
  }
  if (LONG_DIGIT_RUN.test(text)) return parseLosslessOrFail(rewriteNonFinite(text) ?? text, text, what);
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    const rewritten = rewriteNonFinite(text);
    if (rewritten === undefined) throw JsonBodyError.notJson(text, what, (error as Error).message);
    return parseLosslessOrFail(rewritten, text, what);
  }
}

/** The most characters of a client's value that an error message quotes. */
const MAX_DESCRIBED_CHARS = 200;

/**
 * A parsed value as JSON text for an error message: bigints digit for digit (JSON.stringify throws on
 * them), cut at MAX_DESCRIBED_CHARS so a huge value cannot make a huge message.
 */
export function describeJson(value: JsonValue | undefined): string {
  const text = value === undefined ? 'nothing' : (stringifyLossless(value) ?? String(value));
  return text.length > MAX_DESCRIBED_CHARS ? `${text.slice(0, MAX_DESCRIBED_CHARS)}…` : text;
}
