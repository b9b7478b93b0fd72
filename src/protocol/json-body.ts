import { parse as parseLossless } from 'lossless-json';
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

/** Text that is not JSON; the message names what failed to parse and why. */
export class JsonBodyError extends Error {
  constructor(what: string, reason: string) {
    super(`failed to parse the ${what} as JSON: ${reason}`);
    this.name = 'JsonBodyError';
  }
}

function parseLosslessOrFail(text: string, what: string): JsonValue {
  try {
    return parseLossless(text, null, parseNumber) as JsonValue;
  } catch (error) {
    throw new JsonBodyError(what, (error as Error).message);
  }
}

/**
 * Parses a JSON body so that integers beyond 2^53 (INT64/UINT64 tensor data, int64 parameters) come
 * back as exact BigInts, and bare NaN/Infinity as numbers. NOTE: the lossless parser is about 4x slower
 * than JSON.parse, so it runs only when the text needs it: a long digit run, or a failed fast parse.
 * Throws a JsonBodyError for text that is not JSON.
 */
export function parseJsonBody(text: string, what: string): JsonValue {
  if (LONG_DIGIT_RUN.test(text)) return parseLosslessOrFail(rewriteNonFinite(text) ?? text, what);
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    const rewritten = rewriteNonFinite(text);
    if (rewritten === undefined) throw new JsonBodyError(what, (error as Error).message);
    return parseLosslessOrFail(rewritten, what);
  }
}
