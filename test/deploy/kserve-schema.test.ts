import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateKserveResource } from './kserve-schema.js';

const runtime = (spec: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'serving.kserve.io/v1alpha1',
  kind: 'ServingRuntime',
  metadata: { name: 'r' },
  spec: { containers: [{ name: 'kserve-container', image: 'i' }], ...spec },
});

test('the KServe schema check refuses what KServe would', () => {
  validateKserveResource(runtime({ supportedModelFormats: [{ name: 'onnx', version: '1', autoSelect: true }], protocolVersions: ['v2'] }), 'ok');
  assert.throws(() => validateKserveResource(runtime({ supportedModelFormat: [] }), 'typo'), /unknown field supportedModelFormat/);
  assert.throws(() => validateKserveResource(runtime({ protocolVersions: ['v3'] }), 'protocol'), /unknown protocol version v3/);
  assert.throws(() => validateKserveResource(runtime({ containers: [] }), 'empty'), /spec.containers: Required value/);
  assert.throws(() => validateKserveResource(runtime({ containers: [{ name: 'c', ports: [{ containerPort: 'http' }] }] }), 'port'), /containerPort must be integer/);
  assert.throws(() => validateKserveResource(runtime({ supportedModelFormats: [{ name: 'onnx', priority: 0 }] }), 'priority'), /priority/);
  const service = (predictor: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 's' }, spec: { predictor } });
  validateKserveResource(service({ minReplicas: 1, model: { modelFormat: { name: 'onnx' }, storageUri: 's3://b/p', args: ['--x'] } }), 'ok');
  assert.throws(() => validateKserveResource(service({ model: { storageUri: 's3://b' } }), 'format'), /modelFormat.name: Required value/);
  assert.throws(() => validateKserveResource(service({ model: { modelFormat: { name: 'onnx' }, args: 'x' } }), 'args'), /args must be array/);
  assert.throws(() => validateKserveResource(service({ scaleMetric: 'queue' }), 'metric'), /scaleMetric/);
});
