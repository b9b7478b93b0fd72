/** One member of a JSON object as written: its name and its value's text. */
export interface JsonMember {
  readonly name: string;
  readonly valueText: string;
}

/**
 * The members of the JSON object `text` in the order written, a name given twice kept twice, as
 * rapidjson keeps them (Triton's TritonJson `Members`); undefined when `text` is not an object.
 * `text` must be valid JSON (checked first, e.g. by parseJsonBody): this only finds the boundaries.
 * NOTE: JSON.parse keeps the last of two equal names, so a duplicate could not be told from it.
 */
export function jsonObjectMembers(text: string): JsonMember[] | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  const members: JsonMember[] = [];
  i = skipSpace(text, i + 1);
  while (text[i] !== '}') {
    const nameEnd = skipString(text, i);
    const name = JSON.parse(text.slice(i, nameEnd)) as string;
    const valueStart = skipSpace(text, skipSpace(text, nameEnd) + 1);
    const valueEnd = skipValue(text, valueStart);
    members.push({ name, valueText: text.slice(valueStart, valueEnd) });
    i = skipSpace(text, valueEnd);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return members;
}

const SPACE = /[ \t\n\r]/;
const VALUE_END = /[,}\] \t\n\r]/;

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && SPACE.test(text[i]!)) i++;
  return i;
}

/** The index after the string literal that starts at `from` (its opening quote). */
function skipString(text: string, from: number): number {
  let i = from + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** The index after the value that starts at `from`: a string, an object or array (nested to any depth), or a literal. */
function skipValue(text: string, from: number): number {
  const first = text[from];
  if (first === '"') return skipString(text, from);
  if (first === '{' || first === '[') {
    let depth = 0;
    let i = from;
    do {
      const char = text[i];
      if (char === '"') {
        i = skipString(text, i);
        continue;
      }
      if (char === '{' || char === '[') depth++;
      else if (char === '}' || char === ']') depth--;
      i++;
    } while (depth > 0);
    return i;
  }
  let i = from;
  while (i < text.length && !VALUE_END.test(text[i]!)) i++;
  return i;
}
