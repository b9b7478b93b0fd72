import assert from 'node:assert/strict';
import { Container, Volume } from 'kubernetes-models/v1';

/**
 * A schema check for KServe's resources, which no npm package models. KServe's published CRDs
 * (config/crd/minimal/) leave `spec` open (x-kubernetes-preserve-unknown-fields), so the check follows
 * KServe's Go types instead: pkg/apis/serving/v1alpha1/servingruntime_types.go (ServingRuntimeSpec,
 * SupportedModelFormat, the protocols of pkg/constants) and pkg/apis/serving/v1beta1 (the predictor's
 * ModelSpec and ComponentExtensionSpec). Unknown fields are refused; embedded Kubernetes types
 * (containers, volumes) are validated with kubernetes-models.
 */
const PROTOCOLS = new Set(['v1', 'v2', 'grpc-v1', 'grpc-v2']);
const RUNTIME_FIELDS = new Set([
  'supportedModelFormats', 'multiModel', 'disabled', 'protocolVersions', 'workerSpec', 'containers', 'volumes', 'nodeSelector', 'affinity',
  'tolerations', 'labels', 'annotations', 'imagePullSecrets', 'hostIPC', 'grpcEndpoint', 'grpcDataEndpoint', 'httpDataEndpoint', 'replicas',
  'storageHelper', 'builtInAdapter',
]);
const FORMAT_FIELDS = new Set(['name', 'version', 'autoSelect', 'priority']);
const PREDICTOR_FIELDS = new Set([
  'model', 'minReplicas', 'maxReplicas', 'scaleTarget', 'scaleMetric', 'scaleMetricType', 'containerConcurrency', 'timeout', 'canaryTrafficPercent',
  'labels', 'annotations', 'deploymentStrategy', 'autoScaling', 'serviceAccountName', 'containers', 'volumes', 'nodeSelector', 'affinity',
  'tolerations', 'imagePullSecrets', 'logger', 'batcher', 'workerSpec',
]);
const SCALE_METRICS = new Set(['cpu', 'memory', 'concurrency', 'rps']);

type Json = Record<string, unknown>;

function onlyFields(value: Json, allowed: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(value)) assert.ok(allowed.has(key), `${where}: unknown field ${key}`);
}

function validateKubernetes(Model: typeof Container | typeof Volume, value: unknown, where: string): void {
  try {
    new Model(value as never).validate();
  } catch (error) {
    assert.fail(`${where}: ${(error as Error).message}`);
  }
}

function validateRuntimeSpec(spec: Json, where: string): void {
  onlyFields(spec, RUNTIME_FIELDS, `${where} spec`);
  const containers = spec.containers as unknown[];
  assert.ok(Array.isArray(containers) && containers.length > 0, `${where}: spec.containers: Required value`);
  containers.forEach((container, index) => validateKubernetes(Container, container, `${where} spec.containers[${index}]`));
  ((spec.volumes as unknown[] | undefined) ?? []).forEach((volume, index) => validateKubernetes(Volume, volume, `${where} spec.volumes[${index}]`));
  for (const [index, format] of ((spec.supportedModelFormats as Json[] | undefined) ?? []).entries()) {
    const at = `${where} spec.supportedModelFormats[${index}]`;
    onlyFields(format, FORMAT_FIELDS, at);
    assert.equal(typeof format.name, 'string', `${at}.name: Required value`);
    if (format.version !== undefined) assert.equal(typeof format.version, 'string', `${at}.version must be a string`);
    if (format.autoSelect !== undefined) assert.equal(typeof format.autoSelect, 'boolean', `${at}.autoSelect must be a boolean`);
    if (format.priority !== undefined) assert.ok(Number.isInteger(format.priority) && (format.priority as number) >= 1, `${at}.priority must be an integer >= 1`);
  }
  for (const protocol of (spec.protocolVersions as unknown[] | undefined) ?? []) assert.ok(PROTOCOLS.has(protocol as string), `${where}: unknown protocol version ${String(protocol)}`);
}

function validatePredictor(predictor: Json, where: string): void {
  onlyFields(predictor, PREDICTOR_FIELDS, `${where} spec.predictor`);
  for (const field of ['minReplicas', 'maxReplicas', 'scaleTarget']) {
    if (predictor[field] !== undefined) assert.ok(Number.isInteger(predictor[field]) && (predictor[field] as number) >= 0, `${where}: spec.predictor.${field} must be a non-negative integer`);
  }
  if (predictor.scaleMetric !== undefined) assert.ok(SCALE_METRICS.has(predictor.scaleMetric as string), `${where}: spec.predictor.scaleMetric`);
  const model = predictor.model as Json | undefined;
  if (model === undefined) return;
  const { modelFormat, runtime, protocolVersion, storageUri, storage, ...container } = model;
  const format = modelFormat as Json | undefined;
  assert.ok(format !== undefined && typeof format.name === 'string', `${where}: spec.predictor.model.modelFormat.name: Required value`);
  onlyFields(format, new Set(['name', 'version']), `${where} spec.predictor.model.modelFormat`);
  for (const [field, value] of Object.entries({ runtime, storageUri })) if (value !== undefined) assert.equal(typeof value, 'string', `${where}: spec.predictor.model.${field}`);
  if (protocolVersion !== undefined) assert.ok(PROTOCOLS.has(protocolVersion as string), `${where}: unknown protocol version ${String(protocolVersion)}`);
  assert.ok(storage === undefined || typeof storage === 'object', `${where}: spec.predictor.model.storage`);
  // ModelSpec embeds a Container (its name is set by KServe).
  validateKubernetes(Container, { name: 'kserve-container', ...container }, `${where} spec.predictor.model`);
}

/** Throws, naming `where` and the field, when a KServe resource breaks its schema. */
export function validateKserveResource(resource: Json, where: string): void {
  const metadata = resource.metadata as Json | undefined;
  assert.ok(typeof metadata?.name === 'string', `${where}: metadata.name: Required value`);
  const spec = resource.spec as Json;
  const kind = `${resource.apiVersion as string}/${resource.kind as string}`;
  if (kind === 'serving.kserve.io/v1alpha1/ServingRuntime' || kind === 'serving.kserve.io/v1alpha1/ClusterServingRuntime') validateRuntimeSpec(spec, where);
  else if (kind === 'serving.kserve.io/v1beta1/InferenceService') {
    assert.ok(typeof spec?.predictor === 'object', `${where}: spec.predictor: Required value`);
    validatePredictor(spec.predictor as Json, where);
  } else assert.fail(`${where}: no schema for ${kind}`);
}
