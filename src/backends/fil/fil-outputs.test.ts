import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { TREE_MODELS, TREE_REPOSITORY, assertClose, rowsAsFloat32, treeExpectation } from '../../../test/helpers/tree-fixtures.js';
import { MODEL_TYPES, readForest } from './read-forest.js';
import { readFilSettings } from './fil-settings.js';
import { TREESHAP_NAME, computeOutput } from './fil-outputs.js';
import { TreeShap } from './tree-shap.js';

for (const model of TREE_MODELS) {
  test(`${model}: every output agrees with the library's own predictions`, async () => {
    const folder = join(TREE_REPOSITORY, model);
    const config = parseModelConfig(readFileSync(join(folder, 'config.pbtxt'), 'utf8'), `${model}/config.pbtxt`);
    const settings = readFilSettings(config);
    const forest = await readForest(model, join(folder, '1', MODEL_TYPES[settings.modelType]), settings.modelType);
    const expected = treeExpectation(model);
    const input = rowsAsFloat32(expected.rows);
    assertClose(computeOutput(forest, settings, input, expected.rows.length), expected.outputs.output__0!, 'output__0');
    const contributions = expected.outputs[TREESHAP_NAME];
    if (contributions !== undefined) {
      const out = new Float32Array(contributions.length);
      new TreeShap(forest).contributions(input, expected.rows.length, out);
      assertClose(out, contributions, TREESHAP_NAME);
    }
  });
}
