import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../logging/logger.js';
import { TREE_REPOSITORY, rowsAsFloat32, treeExpectation } from '../../../test/helpers/tree-fixtures.js';
import { computeOutput } from './fil-outputs.js';
import { readForest } from './read-forest.js';
import { RowPool } from './row-pool.js';
import { TreeShap } from './tree-shap.js';

test('a batch cut across the row workers gives exactly what the main thread gives, SHAP values included', async (t) => {
  const forest = await readForest('m', join(TREE_REPOSITORY, 'xgb_shap_multi', '1', 'xgboost.json'), 'xgboost_json');
  const settings = { modelType: 'xgboost_json', isClassifier: true, predictProba: true, threshold: 0.5, ignored: [] } as const;
  const pool = new RowPool({ label: 'test', forest, settings, hasShap: true, threadCount: 3, logger: silentLogger });
  t.after(() => pool.close());
  const rows = treeExpectation('xgb_shap_multi').rows;
  const input = rowsAsFloat32(rows);
  const pooled = await pool.run(input, rows.length, true);
  assert.deepEqual(pooled.output, computeOutput(forest, settings, input, rows.length));
  const contributions = new Float32Array(rows.length * 3 * 6);
  new TreeShap(forest).contributions(input, rows.length, contributions);
  assert.deepEqual(pooled.contributions, contributions);
  assert.deepEqual((await pool.run(input.subarray(0, 12), 2, false)).output, computeOutput(forest, settings, input.subarray(0, 12), 2), 'fewer rows than threads');
  assert.equal(pool.isUsable, true);
});
