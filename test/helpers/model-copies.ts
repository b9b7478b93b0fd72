import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIGITS = fileURLToPath(new URL('../../examples/model_repository/digits', import.meta.url));

export interface ModelCopies {
  readonly dir: string;
  /** The copies' names: `digits_0`, `digits_1`, ... */
  readonly names: readonly string[];
  remove(): void;
}

/**
 * A repository in a temporary folder holding `count` copies of the digits MLP (examples/), each
 * renamed in its config.pbtxt and with `instanceCount` CPU instances. The tests and bench/many-models.ts use it.
 */
export function makeDigitsCopies(count: number, instanceCount = 1): ModelCopies {
  const dir = mkdtempSync(join(tmpdir(), 'nereid-copies-'));
  const config = readFileSync(join(DIGITS, 'config.pbtxt'), 'utf8');
  const names = Array.from({ length: count }, (_, index) => `digits_${index}`);
  for (const name of names) {
    cpSync(DIGITS, join(dir, name), { recursive: true });
    writeFileSync(
      join(dir, name, 'config.pbtxt'),
      `${config.replace('name: "digits"', `name: "${name}"`)}instance_group [{ kind: KIND_CPU, count: ${instanceCount} }]\n`,
    );
  }
  return { dir, names, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
