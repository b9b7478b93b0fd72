import { ScalarType } from '@bufbuild/protobuf';
import { fromText } from '@bufbuild/protobuf/txtpb';
import { NereidError } from '../kernel/errors.js';
import { closestName } from './closest-name.js';
import { ModelConfigSchema, type ModelConfig } from '../protocol/gen/model_config_pb.js';
import { locateTextError, type TextErrorContext, type ValueType } from './locate-text-error.js';

/**
 * Parses the text of a config.pbtxt into a ModelConfig. `file` only labels error messages.
 *
 * The text is read by @bufbuild/protobuf's text-format parser, which reads every configuration in Triton's
 * own repository exactly as Triton does. A failure becomes an INVALID_ARG NereidError that says where and
 * what, in place of Triton's bare `29:17: Expected integer, got: $`:
 *
 *     models/simple/config.pbtxt:29:17: unexpected character '$' in field 'max_batch_size'; expected an integer
 *     models/simple/config.pbtxt:3:1: unknown field 'max_batch_sise' at the top level; did you mean 'max_batch_size'?
 *
 * Lines and columns count from 1; a column counts UTF-16 code units, so a tab is one column.
 */
export function parseModelConfig(text: string, file: string): ModelConfig {
  try {
    return fromText(ModelConfigSchema, text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new NereidError('INVALID_ARG', describeTextError(text, file, reason), { cause: error });
  }
}

function describeTextError(text: string, file: string, reason: string): string {
  const context = locateTextError(ModelConfigSchema, text, reason);
  const where = (offset: number): string => `${file}:${lineAndColumn(text, offset)}`;
  const token = context.token;
  const fieldPath = joinPath(context.blockPath, context.fieldName ?? '');
  const inField = fieldPath === '' ? ' at the top level' : ` in field '${fieldPath}'`;
  const valueText = token === undefined ? '' : text.slice(context.valueOffset, token.end);
  let match: RegExpExecArray | null;

  if ((match = /^unknown field "(.*)" (?:for |in map entry)/.exec(reason)) !== null) {
    const name = match[1]!;
    const block = context.blockPath === '' ? ' at the top level' : ` in field '${context.blockPath}'`;
    return `${where(context.offset)}: unknown field '${name}'${block}; ${suggestion(name, context.blockFieldNames)}`;
  }
  if ((match = /^unknown enum value "(.*)" for enum/.exec(reason)) !== null) {
    const name = match[1]!;
    const names = context.valueType?.kind === 'enum' ? context.valueType.desc.values.map((v) => v.name) : [];
    return `${where(context.offset)}: unknown value '${name}'${inField}; ${suggestion(name, names)}`;
  }
  if ((match = /^non-repeated field "(.*)" is repeated$/.exec(reason)) !== null) {
    const path = joinPath(context.blockPath, match[1]!);
    return `${where(context.offset)}: field '${path}' is set more than once; expected a single value, it is not a repeated field`;
  }
  if ((match = /^oneof "(.*)" is already set$/.exec(reason)) !== null) {
    const oneof = context.blockMessage?.oneofs.find((o) => o.name === match![1]);
    const members = oneof?.fields.map((f) => f.name) ?? [];
    const other = context.seenInBlock.find((name) => members.includes(name)) ?? match[1]!;
    const path = joinPath(context.blockPath, token?.text ?? '');
    return (
      `${where(context.offset)}: field '${path}' cannot be set together with '${joinPath(context.blockPath, other)}'; ` +
      `expected only one of ${members.map((m) => `'${m}'`).join(', ')}`
    );
  }
  if ((match = /^cannot decode field \S+ from text format: .*out of range/.exec(reason)) !== null) {
    return `${where(context.valueOffset)}: value ${valueText} is out of range${inField}; expected ${describeRange(context.valueType)}`;
  }
  if (isValueError(reason) && context.position === 'value' && token !== undefined) {
    const shown = token.kind === 'string' ? valueText : `'${valueText}'`;
    return `${where(context.valueOffset)}: invalid value ${shown}${inField}; expected ${describeValue(context.valueType)}`;
  }
  if (reason.startsWith('unexpected end of input')) {
    const close = /expected "(.)"/.exec(reason)?.[1] ?? '}';
    const opened = context.openedAt === undefined ? '' : ` to close the block opened at ${lineAndColumn(text, context.openedAt)}`;
    return `${where(context.offset)}: unexpected end of input${inField}; expected '${close}'${opened}`;
  }
  const what = describeProblem(reason, context);
  const expected = describeExpectation(reason, context);
  return `${where(context.offset)}: ${what}${inField}${expected === undefined ? '' : `; expected ${expected}`}`;
}

/** "did you mean 'x'?" when one name is close, else the list of allowed names. */
function suggestion(name: string, allowed: readonly string[]): string {
  const closest = closestName(name, allowed);
  if (closest !== undefined) {
    return `did you mean '${closest}'?`;
  }
  return allowed.length === 0 ? 'expected a known name' : `expected one of ${allowed.join(', ')}`;
}

const VALUE_ERRORS = [
  /^expected (?:an integer|a bool|a string|a float|an enum value for \S+), got /,
  /^an unsigned field does not accept a negative value$/,
  /^a string value cannot have a sign$/,
  /^invalid float value /,
  /^invalid enum value /,
  /^octal and hexadecimal are not valid for a float field$/,
  /^cannot decode field \S+ from text format: /,
];

function isValueError(reason: string): boolean {
  return VALUE_ERRORS.some((pattern) => pattern.test(reason));
}

/** The "what was wrong" part for syntax and lexical errors. */
function describeProblem(reason: string, context: TextErrorContext): string {
  const token = context.token;
  const character = /^unexpected ("(.)"|U\+[0-9A-F]{4,})$/.exec(reason);
  if (character !== null) {
    return `unexpected character ${character[2] === undefined ? character[1] : `'${character[2]}'`}`;
  }
  if (token === undefined) {
    return 'unexpected end of input';
  }
  if (reason === 'invalid U+000A in string' || reason === 'unterminated string') {
    return 'unterminated string (a string must end on the line it starts)';
  }
  if (token.kind === 'invalid' || /^(?:invalid|unterminated|octal escape)/.test(reason)) {
    return reason.replace(/"(.)"/g, "'$1'");
  }
  return `unexpected ${token.kind === 'string' ? token.text : `'${token.text}'`}`;
}

/** The "expected ..." part for syntax and lexical errors: from the parser's message, else from the position. */
function describeExpectation(reason: string, context: TextErrorContext): string | undefined {
  const stated = /^expected (.+?)(?: before value of field "[^"]*"| in list)?(?:, got .*)?$/.exec(reason)?.[1];
  if (stated !== undefined) {
    return stated.replace(/"([^"]*)"/g, "'$1'");
  }
  switch (context.position) {
    case 'name':
      return context.blockPath === '' ? 'a field name' : "a field name or '}'";
    case 'after-name':
      return "':'";
    case 'value':
      return describeValue(context.valueType);
    case 'list-separator':
      return "',' or ']'";
  }
}

function describeValue(type: ValueType | undefined): string {
  switch (type?.kind) {
    case undefined:
      return 'a value';
    case 'message':
      return "'{'";
    case 'enum':
      return `one of ${type.desc.values.map((v) => v.name).join(', ')}`;
    case 'scalar':
      switch (type.scalar) {
        case ScalarType.BOOL:
          return 'true or false';
        case ScalarType.STRING:
        case ScalarType.BYTES:
          return 'a quoted string';
        case ScalarType.FLOAT:
        case ScalarType.DOUBLE:
          return 'a number';
        case ScalarType.UINT32:
        case ScalarType.FIXED32:
        case ScalarType.UINT64:
        case ScalarType.FIXED64:
          return 'a non-negative integer';
        default:
          return 'an integer';
      }
  }
}

function describeRange(type: ValueType | undefined): string {
  if (type?.kind !== 'scalar') {
    return describeValue(type);
  }
  switch (type.scalar) {
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return 'an integer from -2147483648 to 2147483647';
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return 'an integer from 0 to 4294967295';
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return 'an integer from 0 to 18446744073709551615';
    default:
      return 'an integer from -9223372036854775808 to 9223372036854775807';
  }
}

function joinPath(base: string, name: string): string {
  return base === '' ? name : name === '' ? base : `${base}.${name}`;
}

/** `line:column`, both counted from 1. */
function lineAndColumn(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `${line}:${offset - lineStart + 1}`;
}
