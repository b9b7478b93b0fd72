import { ScalarType, type DescEnum, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { fromText } from '@bufbuild/protobuf/txtpb';

/*
 * Finds where a protobuf text-format parse failed, for error messages that name line, column and field.
 *
 * NOTE: `fromText` (@bufbuild/protobuf/txtpb) reports only a reason ("expected an integer, got a string"),
 * with no offset. Its tokenizer is lazy (one token of lookahead), so we find the offending token by parsing
 * prefixes that end after token k followed by a character no tokenizer accepts: the original error comes back
 * exactly when the parser failed without reading past token k. The smallest such k, by binary search, is the
 * token the parser stopped at. This uses only the public API; `locate-text-error.test.ts` pins the behaviour.
 * Walking the tokens up to that point with the schema then gives the enclosing field path (`input[1].dims`).
 */

/** Where a text-format parse failed, and in which field. */
export interface TextErrorContext {
  /** Offset of the offending token in the text; the text's length for the end of input. */
  readonly offset: number;
  /** The offending token; undefined at the end of input. */
  readonly token: TextToken | undefined;
  /** What the parser expected there: a field name, the `:` after one, a value, or `,`/`]` in a list. */
  readonly position: 'name' | 'after-name' | 'value' | 'list-separator';
  /** Path of the enclosing block, e.g. `input[0]`; '' at the top level. */
  readonly blockPath: string;
  /** Message type of the enclosing block; undefined inside a map entry. */
  readonly blockMessage: DescMessage | undefined;
  /** Names allowed in the enclosing block (field names, or key/value in a map entry). */
  readonly blockFieldNames: readonly string[];
  /** Field names already set in the enclosing block, in order. */
  readonly seenInBlock: readonly string[];
  /** The field whose value is being read (position !== 'name'). */
  readonly fieldName: string | undefined;
  readonly valueType: ValueType | undefined;
  /** Offset where the current value starts, including a leading `-`. */
  readonly valueOffset: number;
  /** Offset of the innermost `{` or `<` still open, if any. */
  readonly openedAt: number | undefined;
}

export interface TextToken {
  readonly kind: 'identifier' | 'string' | 'number' | 'symbol' | 'invalid';
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** The type of a value in the text: a scalar, an enum or a message (list and map elements included). */
export type ValueType =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'enum'; readonly desc: DescEnum }
  | { readonly kind: 'message'; readonly desc: DescMessage };

/** Finds the token `fromText` failed at (reason `message`) and describes where it sits. */
export function locateTextError(schema: DescMessage, text: string, message: string): TextErrorContext {
  const tokens = scanTokens(text);
  let index = findFailingToken(schema, text, tokens, message);
  if (index === undefined) {
    // The parser failed at the end of input or inside a token our scanner could not read: take the
    // first unreadable token, else the end of input.
    const last = tokens.at(-1);
    index = last?.kind === 'invalid' ? tokens.length - 1 : tokens.length;
  }
  const walker = new BlockWalker(schema);
  for (const token of tokens.slice(0, index)) {
    walker.step(token);
  }
  return walker.context(tokens[index], text.length);
}

/** Splits text into tokens the way the txtpb tokenizer does; stops after the first unreadable one. */
export function scanTokens(text: string): TextToken[] {
  const tokens: TextToken[] = [];
  const push = (kind: TextToken['kind'], start: number, end: number): void => {
    tokens.push({ kind, text: text.slice(start, end), start, end });
  };
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    pos = skipSpace(text, pos);
    if (pos >= text.length) {
      return tokens;
    }
    const start = pos;
    const c = text[pos]!;
    if ('{}<>[]:,;'.includes(c) || (c === '-' && !isLetter(text[pos + 1]))) {
      push('symbol', start, pos + 1);
      pos++;
    } else if (c === '"' || c === "'") {
      pos = scanString(text, pos);
      if (pos < 0) {
        push('invalid', start, lineEnd(text, start));
        return tokens;
      }
      push('string', start, pos);
    } else if (isDigit(c) || (c === '.' && isDigit(text[pos + 1]))) {
      pos = scanNumber(text, pos);
      push('number', start, pos);
    } else if (isLetter(c) || c === '-') {
      pos++;
      while (isLetter(text[pos]) || isDigit(text[pos])) {
        pos++;
      }
      push('identifier', start, pos);
    } else {
      push('invalid', start, start + String.fromCodePoint(text.codePointAt(start)!).length);
      return tokens;
    }
  }
}

/** Returns the index of the token the parser failed at, or undefined when no prefix reproduces the error. */
function findFailingToken(
  schema: DescMessage,
  text: string,
  tokens: readonly TextToken[],
  message: string,
): number | undefined {
  const failsWithin = (index: number): boolean => {
    try {
      fromText(schema, text.slice(0, tokens[index]!.end) + ' \u0001');
      return false;
    } catch (error) {
      return error instanceof Error && error.message === message;
    }
  };
  if (tokens.length === 0 || !failsWithin(tokens.length - 1)) {
    return undefined;
  }
  let low = 0;
  let high = tokens.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (failsWithin(middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

interface CurrentField {
  readonly name: string;
  readonly field: DescField | undefined;
  readonly type: ValueType | undefined;
}

interface Block {
  readonly message: DescMessage | undefined;
  /** Set when the block is one entry of a map field. */
  readonly mapField: (DescField & { fieldKind: 'map' }) | undefined;
  readonly segment: string;
  readonly inList: boolean;
  readonly openedAt: number;
  readonly parentField: CurrentField | undefined;
  readonly counts: Map<string, number>;
  readonly seen: string[];
  keyText?: string;
}

/** Follows the nesting of blocks and fields token by token, enough to say where an error sits. */
class BlockWalker {
  readonly #blocks: Block[];
  #mode: TextErrorContext['position'] | 'list-value' = 'name';
  #current: CurrentField | undefined;
  /** Start of the value being read, including its sign; -1 until its first token. */
  #valueOffset = -1;

  constructor(schema: DescMessage) {
    this.#blocks = [newBlock(schema, undefined, '', false, 0, undefined)];
  }

  step(token: TextToken): void {
    const block = this.#blocks.at(-1)!;
    const { text } = token;
    const opensBlock = text === '{' || text === '<';
    switch (this.#mode) {
      case 'name':
        if (token.kind === 'identifier') {
          this.#current = resolveField(block, text);
          block.seen.push(text);
          this.#mode = 'after-name';
        } else if ((text === '}' || text === '>') && this.#blocks.length > 1) {
          const closed = this.#blocks.pop()!;
          this.#current = closed.parentField;
          this.#mode = closed.inList ? 'list-separator' : 'name';
        }
        return;
      case 'after-name':
        this.#mode = 'value';
        this.#valueOffset = -1;
        if (text !== ':') {
          this.step(token);
        }
        return;
      case 'value':
        if (opensBlock) {
          this.#open(token, false);
        } else if (text === '[') {
          this.#mode = 'list-value';
        } else if (text === '-') {
          this.#markValueStart(token);
        } else {
          if (block.mapField !== undefined && this.#current?.name === 'key') {
            block.keyText = text;
          }
          this.#mode = 'name';
        }
        return;
      case 'list-value':
        if (opensBlock) {
          this.#open(token, true);
        } else if (text === ']') {
          this.#mode = 'name';
        } else if (text === '-') {
          this.#markValueStart(token);
        } else {
          this.#mode = 'list-separator';
        }
        return;
      case 'list-separator':
        if (text === ',') {
          this.#mode = 'list-value';
          this.#valueOffset = -1;
        } else if (text === ']') {
          this.#mode = 'name';
        }
        return;
    }
  }

  #markValueStart(token: TextToken): void {
    if (this.#valueOffset < 0) {
      this.#valueOffset = token.start;
    }
  }

  #open(token: TextToken, inList: boolean): void {
    const parent = this.#blocks.at(-1)!;
    const current = this.#current;
    const name = current?.name ?? '?';
    const message = current?.type?.kind === 'message' ? current.type.desc : undefined;
    let block: Block;
    if (current?.field?.fieldKind === 'map') {
      block = newBlock(undefined, current.field, name, inList, token.start, current);
    } else if (parent.mapField !== undefined && name === 'value') {
      block = newBlock(message, undefined, '', inList, token.start, current);
    } else if (current?.field?.fieldKind === 'list') {
      const index = parent.counts.get(name) ?? 0;
      parent.counts.set(name, index + 1);
      block = newBlock(message, undefined, `${name}[${index}]`, inList, token.start, current);
    } else {
      block = newBlock(message, undefined, name, inList, token.start, current);
    }
    this.#blocks.push(block);
    this.#mode = 'name';
  }

  /** Describes the state just before `token` (undefined: the end of input). */
  context(token: TextToken | undefined, textLength: number): TextErrorContext {
    const block = this.#blocks.at(-1)!;
    const offset = token?.start ?? textLength;
    const inValue = this.#mode !== 'name';
    return {
      offset,
      token,
      position: this.#mode === 'list-value' ? 'value' : this.#mode,
      blockPath: pathOf(this.#blocks),
      blockMessage: block.message,
      blockFieldNames: block.mapField !== undefined ? ['key', 'value'] : (block.message?.fields.map((f) => f.name) ?? []),
      seenInBlock: [...block.seen],
      fieldName: inValue ? this.#current?.name : undefined,
      valueType: inValue ? this.#current?.type : undefined,
      valueOffset: inValue && this.#valueOffset >= 0 ? this.#valueOffset : offset,
      openedAt: this.#blocks.length > 1 ? block.openedAt : undefined,
    };
  }
}

function newBlock(
  message: DescMessage | undefined,
  mapField: Block['mapField'],
  segment: string,
  inList: boolean,
  openedAt: number,
  parentField: CurrentField | undefined,
): Block {
  return { message, mapField, segment, inList, openedAt, parentField, counts: new Map(), seen: [] };
}

function resolveField(block: Block, name: string): CurrentField {
  const mapField = block.mapField;
  if (mapField !== undefined) {
    if (name === 'key') {
      return { name, field: undefined, type: { kind: 'scalar', scalar: mapField.mapKey } };
    }
    if (name === 'value') {
      return { name, field: undefined, type: mapValueType(mapField) };
    }
    return { name, field: undefined, type: undefined };
  }
  const field = block.message?.fields.find((f) => f.name === name);
  return { name, field, type: field === undefined ? undefined : fieldValueType(field) };
}

/** The type of one value of a field: the element type for lists, the entry (a block) for maps. */
function fieldValueType(field: DescField): ValueType | undefined {
  switch (field.fieldKind) {
    case 'scalar':
      return { kind: 'scalar', scalar: field.scalar };
    case 'enum':
      return { kind: 'enum', desc: field.enum };
    case 'message':
      return { kind: 'message', desc: field.message };
    case 'list':
      if (field.listKind === 'scalar') {
        return { kind: 'scalar', scalar: field.scalar };
      }
      return field.listKind === 'enum' ? { kind: 'enum', desc: field.enum } : { kind: 'message', desc: field.message };
    case 'map':
      return undefined;
  }
}

function mapValueType(field: DescField & { fieldKind: 'map' }): ValueType {
  switch (field.mapKind) {
    case 'scalar':
      return { kind: 'scalar', scalar: field.scalar };
    case 'enum':
      return { kind: 'enum', desc: field.enum };
    case 'message':
      return { kind: 'message', desc: field.message };
  }
}

function pathOf(blocks: readonly Block[]): string {
  const segments: string[] = [];
  for (const block of blocks.slice(1)) {
    if (block.mapField !== undefined) {
      segments.push(`${block.segment}[${block.keyText ?? '?'}]`);
    } else if (block.segment !== '') {
      segments.push(block.segment);
    }
  }
  return segments.join('.');
}

function skipSpace(text: string, pos: number): number {
  for (;;) {
    const c = text[pos];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f') {
      pos++;
    } else if (c === '#') {
      pos = lineEnd(text, pos);
    } else {
      return pos;
    }
  }
}

function lineEnd(text: string, pos: number): number {
  const end = text.indexOf('\n', pos);
  return end < 0 ? text.length : end;
}

/** Returns the offset after the closing quote, or -1 when the string is not closed on its line. */
function scanString(text: string, pos: number): number {
  const quote = text[pos];
  for (pos++; pos < text.length; pos++) {
    const c = text[pos];
    if (c === '\\') {
      pos++;
    } else if (c === quote) {
      return pos + 1;
    } else if (c === '\n' || c === '\0') {
      return -1;
    }
  }
  return -1;
}

function scanNumber(text: string, pos: number): number {
  const isHex = /^0[xX]/.test(text.slice(pos, pos + 2));
  for (pos++; pos < text.length; pos++) {
    const c = text[pos]!;
    const isExponentSign = (c === '+' || c === '-') && !isHex && /[eE]/.test(text[pos - 1]!);
    if (!(isLetter(c) || isDigit(c) || c === '.' || isExponentSign)) {
      break;
    }
  }
  return pos;
}

function isLetter(c: string | undefined): boolean {
  return c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}
