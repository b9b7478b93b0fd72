/** RE2's flag group at the start of a pattern, `(?i)`, `(?-i)`, `(?is-m)`... */
const LEADING_FLAGS = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?\)/;

/**
 * The pattern of Triton's `--http-header-forward-pattern` and `--grpc-header-forward-pattern` (server
 * src/command_line_parser.cc; qa/L0_parameters), matched anywhere in a header's name (RE2's
 * PartialMatch; frontends/header-forwarding.ts forwards what it matches). It is case-insensitive, as
 * Triton compiles it, unless it starts with RE2's `(?-i)`.
 * NOTE: JavaScript's regular expressions read RE2's patterns alike except for flag groups, which only
 * a leading one is taken from (i, m and s, as JavaScript's flags); any other construct JavaScript
 * does not know fails at start-up, with `fail(message)`.
 */
export function compileHeaderForwardPattern(flag: string, source: string, fail: (message: string) => Error): RegExp {
  const flags = new Set(['i']);
  let body = source;
  const leading = LEADING_FLAGS.exec(source);
  if (leading !== null) {
    for (const letter of leading[1]!) flags.add(letter);
    for (const letter of leading[2] ?? '') flags.delete(letter);
    body = source.slice(leading[0].length);
  }
  const unknown = [...flags].filter((letter) => !'ims'.includes(letter));
  if (unknown.length > 0) throw fail(`--${flag} '${source}': flag ${unknown.join(', ')} is not supported; Nereid reads the flags i, m and s`);
  try {
    return new RegExp(body, [...flags].join(''));
  } catch (error) {
    throw fail(`--${flag} '${source}' is not a valid regular expression: ${(error as Error).message}`);
  }
}
