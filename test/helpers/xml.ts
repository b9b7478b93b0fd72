/**
 * Checks that markup is well-formed XML (the SVG `nereid perf --plot` writes): every tag closed in
 * order, attributes quoted, text free of bare `<` and `&`. Returns the element names in document
 * order, or throws with what is wrong. Enough for generated files; not a general XML parser.
 */
export function checkWellFormedXml(text: string): string[] {
  const names: string[] = [];
  const open: string[] = [];
  const token = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>|<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g;
  for (const match of text.matchAll(token)) {
    const [, closing, name, , selfClosing, textRun, bareLess] = match;
    if (bareLess !== undefined) throw new Error(`malformed tag at offset ${match.index}: ${text.slice(match.index, match.index + 40)}`);
    if (textRun !== undefined) {
      const badAmpersand = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.exec(textRun);
      if (badAmpersand !== null) throw new Error(`bare '&' in text at offset ${match.index + badAmpersand.index}`);
      continue;
    }
    if (name === undefined) continue;
    if (closing === '/') {
      const expected = open.pop();
      if (expected !== name) throw new Error(`</${name}> at offset ${match.index} closes <${expected ?? 'nothing'}>`);
    } else {
      names.push(name);
      if (selfClosing !== '/') open.push(name);
    }
  }
  if (open.length > 0) throw new Error(`unclosed elements: ${open.join(', ')}`);
  return names;
}
