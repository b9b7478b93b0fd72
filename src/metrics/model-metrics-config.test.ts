import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseModelConfig } from '../config/parse-model-config.js';
import { silentLogger } from '../logging/logger.js';
import { firstResponseBucketsOf } from './model-metrics-config.js';

const control = (family: string, buckets: string): string => `{ metric_identifier { family: "${family}" } histogram_options { buckets: [ ${buckets} ] } }`;

test("model_metrics sets the first-response buckets, the last control for it winning; another family is left out with Triton's warning", () => {
  const warnings: string[] = [];
  const logger = { ...silentLogger, warning: (_component: string, message: string) => warnings.push(message) };
  const config = parseModelConfig(
    `name: "m"\nmodel_metrics { metric_control [ ${control('nv_inference_first_response_histogram_ms', '1, 2')}, ${control('nv_gpu_utilization', '1')}, ${control('nv_inference_first_response_histogram_ms', '-1, 0.0, 2.5')} ] }`,
    'config.pbtxt',
  );
  assert.deepEqual(firstResponseBucketsOf(config, logger), [-1, 0, 2.5]);
  assert.deepEqual(warnings, ["Metric family 'nv_gpu_utilization' in 'metric_identifier' is not a customizable metric in Triton core."]);
  assert.equal(firstResponseBucketsOf(parseModelConfig('name: "m"', 'config.pbtxt'), logger), undefined);
});
