/**
 * The fil backend's fixtures (scripts/generate_tree_models.py, scripts/convert_sklearn_model.py):
 * test/fixtures/fil_repository/<model>/ and, in test/fixtures/fil_expected/<model>.json, the rows
 * and the outputs the model's own library gives for them.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const TREE_REPOSITORY = fileURLToPath(new URL('../fixtures/fil_repository', import.meta.url));
const EXPECTED = fileURLToPath(new URL('../fixtures/fil_expected', import.meta.url));

export interface TreeExpectation {
  /** Feature rows; null for a missing value. */
  readonly rows: ReadonlyArray<ReadonlyArray<number | null>>;
  /** Each output's values for all rows, row-major. */
  readonly outputs: Readonly<Record<string, readonly number[]>>;
}

export const TREE_MODELS: readonly string[] = readdirSync(TREE_REPOSITORY).sort();

export function treeExpectation(model: string): TreeExpectation {
  return JSON.parse(readFileSync(`${EXPECTED}/${model}.json`, 'utf8')) as TreeExpectation;
}

/** The rows as one float32 batch, NaN for missing values. */
export function rowsAsFloat32(rows: TreeExpectation['rows']): Float32Array {
  return Float32Array.from(rows.flat(), (value) => (value === null ? Number.NaN : value));
}

/** Asserts |actual - expected| <= 1e-5 * max(|expected|, 1e-1) for every value (1e-5 relative, 1e-6 absolute near 0). */
export function assertClose(actual: ArrayLike<number>, expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, ${expected.length} expected`);
  for (let i = 0; i < expected.length; i++) {
    const tolerance = 1e-5 * Math.max(Math.abs(expected[i]!), 0.1);
    assert.ok(Math.abs(actual[i]! - expected[i]!) <= tolerance, `${what}: value ${i} is ${actual[i]}, expected ${expected[i]} (±${tolerance})`);
  }
}
