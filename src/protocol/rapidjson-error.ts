/**
 * RapidJSON's English messages (rapidjson/error/en.h, version 1.1.0, the one Triton's images build
 * with), for the errors its reader reports on the text a client can send. Triton parses every HTTP body with RapidJSON (TritonJson, kParseNanAndInfFlag) and
 * answers `failed to parse the request JSON buffer: <message> at <offset>`; Triton's QA looks for it.
 */
const MESSAGES = {
  documentEmpty: 'The document is empty.',
  rootNotSingular: 'The document root must not be followed by other values.',
  valueInvalid: 'Invalid value.',
  objectMissName: 'Missing a name for object member.',
  objectMissColon: 'Missing a colon after a name of object member.',
  objectMissCommaOrCurlyBracket: "Missing a comma or '}' after an object member.",
  arrayMissCommaOrSquareBracket: "Missing a comma or ']' after an array element.",
  unicodeEscapeInvalidHex: 'Incorrect hex digit after \\u escape in string.',
  unicodeSurrogateInvalid: 'The surrogate pair in string is invalid.',
  escapeInvalid: 'Invalid escape character in string.',
  missQuotationMark: 'Missing a closing quotation mark in string.',
  numberMissFraction: 'Miss fraction part in number.',
  numberMissExponent: 'Miss exponent in number.',
} as const;

export interface RapidJsonError {
  readonly message: string;
  /** Where RapidJSON stopped, in bytes of the UTF-8 text (its stream's Tell()). */
  readonly offset: number;
}

/** Thrown inside the scan to stop at the first error, as RapidJSON does. */
class Stop {
  constructor(
    readonly message: string,
    readonly at: number,
  ) {}
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const SIMPLE_ESCAPES = new Set([...'"\\/bfnrt'].map((char) => char.charCodeAt(0)));

/**
 * The first error RapidJSON's reader reports for `text`, as its message and byte offset; undefined
 * when it would accept the text. NOTE: a scan of our own, written from RapidJSON's reader
 * (GenericReader: ParseValue, ParseObject, ParseArray, ParseString, ParseNumber with NaN and Infinity),
 * because the JavaScript parsers' messages and positions differ from it; iterative, so that no nesting
 * depth can overflow the stack. It runs only on text that already failed to parse.
 */
export function rapidJsonError(text: string): RapidJsonError | undefined {
  let i = 0;
  /** The next character's code, 0 at the end (RapidJSON's stream answers '\0' there). */
  const peek = (): number => (i < text.length ? text.charCodeAt(i) : 0);
  const skipWhitespace = (): void => {
    for (let c = peek(); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = peek()) i++;
  };
  /** Takes the characters of `word` while they match; the first that does not is an invalid value. */
  const consume = (word: string): void => {
    for (const char of word) {
      if (peek() !== char.charCodeAt(0)) throw new Stop(MESSAGES.valueInvalid, i);
      i++;
    }
  };
  const hex4 = (escapeAt: number): number => {
    let value = 0;
    for (let k = 0; k < 4; k++) {
      const c = peek();
      if (!isHex(c)) throw new Stop(MESSAGES.unicodeEscapeInvalidHex, escapeAt);
      value = value * 16 + Number.parseInt(String.fromCharCode(c), 16);
      i++;
    }
    return value;
  };
  const string = (): void => {
    i++;
    for (;;) {
      const c = peek();
      if (c === 0x5c) {
        const escapeAt = i;
        i++;
        const e = peek();
        if (SIMPLE_ESCAPES.has(e)) {
          i++;
        } else if (e === 0x75) {
          i++;
          // A lone low surrogate passes (RapidJSON 1.1.0, what Triton builds with); a high one needs its pair.
          const code = hex4(escapeAt);
          if (code >= 0xd800 && code <= 0xdbff) {
            if (peek() !== 0x5c) throw new Stop(MESSAGES.unicodeSurrogateInvalid, escapeAt);
            i++;
            if (peek() !== 0x75) throw new Stop(MESSAGES.unicodeSurrogateInvalid, escapeAt);
            i++;
            const low = hex4(escapeAt);
            if (low < 0xdc00 || low > 0xdfff) throw new Stop(MESSAGES.unicodeSurrogateInvalid, escapeAt);
          }
        } else {
          throw new Stop(MESSAGES.escapeInvalid, escapeAt);
        }
      } else if (c === 0x22) {
        i++;
        return;
      } else if (c === 0) {
        throw new Stop(MESSAGES.missQuotationMark, i);
      } else if (c < 0x20) {
        // RapidJSON 1.1.0's words for a control character in a string (later versions say invalid encoding).
        throw new Stop(MESSAGES.escapeInvalid, i);
      } else {
        i++;
      }
    }
  };
  const digits = (): void => {
    while (isDigit(peek())) i++;
  };
  const number = (): void => {
    // RapidJSON reports an invalid number where it stopped: after a leading '-', at the character after it.
    if (peek() === 0x2d) i++;
    const c = peek();
    if (c === 0x30) {
      i++;
    } else if (c >= 0x31 && c <= 0x39) {
      digits();
    } else if (c === 0x4e) {
      consume('NaN');
      return;
    } else if (c === 0x49) {
      consume('Inf');
      if (peek() === 0x69) consume('inity');
      return;
    } else {
      throw new Stop(MESSAGES.valueInvalid, i);
    }
    if (peek() === 0x2e) {
      i++;
      if (!isDigit(peek())) throw new Stop(MESSAGES.numberMissFraction, i);
      digits();
    }
    if (peek() === 0x65 || peek() === 0x45) {
      i++;
      if (peek() === 0x2b || peek() === 0x2d) i++;
      if (!isDigit(peek())) throw new Stop(MESSAGES.numberMissExponent, i);
      digits();
    }
  };
  /** An object member's name and colon, leaving the scan at its value. */
  const memberName = (): void => {
    if (peek() !== 0x22) throw new Stop(MESSAGES.objectMissName, i);
    string();
    skipWhitespace();
    if (peek() !== 0x3a) throw new Stop(MESSAGES.objectMissColon, i);
    i++;
    skipWhitespace();
  };

  try {
    skipWhitespace();
    if (peek() === 0) throw new Stop(MESSAGES.documentEmpty, i);
    /** The arrays ('[') and objects ('{') open around the scan. */
    const open: number[] = [];
    for (;;) {
      // A value.
      const c = peek();
      if (c === 0x6e) consume('null');
      else if (c === 0x74) consume('true');
      else if (c === 0x66) consume('false');
      else if (c === 0x22) string();
      else if (c === 0x7b || c === 0x5b) {
        i++;
        skipWhitespace();
        if (peek() === (c === 0x7b ? 0x7d : 0x5d)) {
          i++;
        } else {
          open.push(c);
          if (c === 0x7b) memberName();
          continue;
        }
      } else number();
      // What follows it: the next element or member, or the end of the containers it closes.
      let isNextValue = false;
      while (open.length > 0 && !isNextValue) {
        const container = open[open.length - 1]!;
        skipWhitespace();
        const next = peek();
        if (next === 0x2c) {
          i++;
          skipWhitespace();
          if (container === 0x7b) memberName();
          isNextValue = true;
        } else if (next === (container === 0x7b ? 0x7d : 0x5d)) {
          i++;
          open.pop();
        } else {
          throw new Stop(container === 0x7b ? MESSAGES.objectMissCommaOrCurlyBracket : MESSAGES.arrayMissCommaOrSquareBracket, i);
        }
      }
      if (!isNextValue) break;
    }
    skipWhitespace();
    if (peek() !== 0) throw new Stop(MESSAGES.rootNotSingular, i);
    return undefined;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return { message: error.message, offset: new TextEncoder().encode(text.slice(0, error.at)).byteLength };
  }
}
