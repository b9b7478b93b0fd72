import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service } from 'kubernetes-models/v1';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { parseServeArgs } from '../../src/config/server-options.js';
import { matchRoute } from '../../src/frontends/http/routes.js';
import { validateKserveResource } from './kserve-schema.js';

/**
 * Every manifest in deploy/ is validated against its schema (kubernetes-models for Kubernetes and the
 * Prometheus Operator, validateKserveResource for KServe's CRDs), and what the server must agree with
 * (its flags, ports and health paths) is checked against the server's own parser and router, so a
 * renamed flag or a moved route breaks this test rather than a cluster. No kustomize runs here: each
 * overlay's patches are applied with the strategic merge rules its patches need (lists of named items
 * merge by name) and the result is validated too.
 */
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));

type Json = Record<string, unknown>;
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? yamlFiles(join(dir, entry.name)) : entry.name.endsWith('.yaml') ? [join(dir, entry.name)] : [],
  );
}
const documents = (file: string): Json[] => parseAllDocuments(readFileSync(file, 'utf8')).map((document) => document.toJS() as Json);

/** Validates one resource against its schema; throws naming the file and the schema's complaint. */
function validate(resource: Json, where: string): void {
  const key = `${resource.apiVersion as string}/${resource.kind as string}`;
  if (key.startsWith('serving.kserve.io/')) return validateKserveResource(resource, where);
  const Model = MODELS[key];
  assert.ok(Model !== undefined, `${where}: no schema for ${key}`);
  try {
    new Model(resource as never).validate();
  } catch (error) {
    assert.fail(`${where}: ${(error as Error).message}`);
  }
}

/** Kustomize's strategic merge for what these patches hold: maps merge, lists of named items merge by name, others replace. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (Array.isArray(target) && Array.isArray(patch) && patch.every((item) => typeof (item as Json)?.name === 'string')) {
    const merged = target.map((item) => {
      const match = patch.find((other) => (other as Json).name === (item as Json).name);
      return match === undefined ? item : mergePatch(item, match);
    });
    return [...merged, ...patch.filter((item) => !target.some((other) => (other as Json).name === (item as Json).name))];
  }
  if (typeof target === 'object' && target !== null && !Array.isArray(target) && typeof patch === 'object' && patch !== null && !Array.isArray(patch)) {
    const merged: Json = { ...(target as Json) };
    for (const [key, value] of Object.entries(patch)) merged[key] = key in merged ? mergePatch(merged[key], value) : value;
    return merged;
  }
  return patch;
}

/** The resources a kustomization builds: its resources (files or other kustomizations) with its patches applied. */
function build(dir: string): Json[] {
  const kustomization = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources?: string[]; patches?: Array<{ path: string }> };
  const resources = (kustomization.resources ?? []).flatMap((resource) => {
    const path = join(dir, resource);
    assert.ok(existsSync(path), `${dir}/kustomization.yaml: no such resource ${resource}`);
    return existsSync(join(path, 'kustomization.yaml')) ? build(path) : documents(path);
  });
  for (const { path } of kustomization.patches ?? []) {
    assert.ok(existsSync(join(dir, path)), `${dir}/kustomization.yaml: no such patch ${path}`);
    for (const patch of documents(join(dir, path))) {
      const index = resources.findIndex((resource) => resource.kind === patch.kind && (resource.metadata as Json).name === (patch.metadata as Json).name);
      assert.ok(index >= 0, `${path}: patches no resource of the base`);
      resources[index] = mergePatch(resources[index], patch) as Json;
    }
  }
  return resources;
}

const KUSTOMIZATIONS = yamlFiles(DEPLOY).filter((file) => file.endsWith('kustomization.yaml')).map(dirname);
const OVERLAYS = KUSTOMIZATIONS.filter((dir) => dir.includes('/overlays/'));
const PATCHES = new Set(KUSTOMIZATIONS.flatMap((dir) => ((parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { patches?: Array<{ path: string }> }).patches ?? []).map(({ path }) => join(dir, path))));

test('every manifest (but patches and tool values) is valid against its schema', () => {
  const files = yamlFiles(DEPLOY).filter((file) => !file.endsWith('kustomization.yaml') && !PATCHES.has(file) && !file.includes('/prometheus-adapter/'));
  assert.ok(files.length >= 9, files.join());
  for (const file of files) for (const resource of documents(file)) validate(resource, file.slice(DEPLOY.length));
});

test('every overlay builds into valid resources', () => {
  assert.deepEqual(OVERLAYS.map((dir) => dir.slice(DEPLOY.length)).sort(), ['kubernetes/overlays/s3', 'kubernetes/overlays/volume']);
  for (const dir of OVERLAYS) for (const resource of build(dir)) validate(resource, `${dir.slice(DEPLOY.length)} (built)`);
});

interface ContainerSpec {
  args: string[];
  ports: Array<{ name?: string; containerPort: number }>;
  startupProbe?: { httpGet: { path: string; port?: string | number } };
  livenessProbe?: { httpGet: { path: string; port?: string | number } };
  readinessProbe?: { httpGet: { path: string; port?: string | number } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

/** The server's options from a container's arguments (`serve` and Nereid's flags), as the CLI parses them. */
function optionsOf(container: ContainerSpec, where: string): Exclude<ReturnType<typeof parseServeArgs>, 'help'> {
  assert.equal(container.args[0], 'serve', where);
  const options = parseServeArgs(container.args.slice(1));
  assert.ok(options !== 'help');
  return options;
}

test("the Deployments' flags, ports, probes and grace period agree with the server", () => {
  for (const dir of [join(DEPLOY, 'kubernetes/base'), ...OVERLAYS]) {
    const deployment = build(dir).find((resource) => resource.kind === 'Deployment') as { spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: ContainerSpec[] } } } };
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0]!;
    const where = dir.slice(DEPLOY.length);
    const options = optionsOf(container, where);
    const ports = new Map(container.ports.map((port) => [port.name, port.containerPort]));
    assert.deepEqual(Object.fromEntries(ports), { http: options.httpPort, grpc: options.grpcPort, metrics: options.metricsPort }, where);
    for (const [probe, check] of [['startupProbe', 'live'], ['livenessProbe', 'live'], ['readinessProbe', 'ready']] as const) {
      const { path, port } = container[probe]!.httpGet;
      assert.deepEqual(matchRoute('GET', path), { kind: 'health', check }, `${where}: ${probe}`);
      assert.equal(ports.get(port as string), options.httpPort, `${where}: ${probe} asks the HTTP port`);
    }
    const preStopS = Number(container.lifecycle?.preStop?.exec?.command[1] ?? 0);
    assert.ok(pod.terminationGracePeriodSeconds > preStopS + options.exitTimeoutMs / 1000, `${where}: the grace period outlasts preStop and --exit-timeout-secs`);
  }
});

test('the Service, ServiceMonitor and HPA name real ports and metrics', () => {
  const resources = build(join(DEPLOY, 'kubernetes/base'));
  const container = (resources.find((resource) => resource.kind === 'Deployment') as { spec: { template: { spec: { containers: ContainerSpec[] } } } }).spec.template.spec.containers[0]!;
  const portNames = new Set(container.ports.map((port) => port.name));
  const service = resources.find((resource) => resource.kind === 'Service') as { spec: { ports: Array<{ targetPort: string }> } };
  for (const port of service.spec.ports) assert.ok(portNames.has(port.targetPort), port.targetPort);
  const monitor = resources.find((resource) => resource.kind === 'ServiceMonitor') as { spec: { endpoints: Array<{ port: string; path: string }> } };
  assert.deepEqual(monitor.spec.endpoints.map(({ port, path }) => [port, path]), [['metrics', '/metrics']]);
  const hpa = resources.find((resource) => resource.kind === 'HorizontalPodAutoscaler') as { spec: { metrics: Array<{ pods?: { metric: { name: string } } }> } };
  const customMetric = hpa.spec.metrics.find((metric) => metric.pods !== undefined)!.pods!.metric.name;
  const adapter = parseYaml(readFileSync(join(DEPLOY, 'kubernetes/prometheus-adapter/values.yaml'), 'utf8')) as {
    rules: { custom: Array<{ seriesQuery: string; name: { as: string }; metricsQuery: string }> };
  };
  const rule = adapter.rules.custom.find((candidate) => candidate.name.as === customMetric);
  assert.ok(rule !== undefined, `no adapter rule makes ${customMetric}`);
  // The metric names the rule reads are those the server exports (src/metrics/).
  const exported = readdirSync(fileURLToPath(new URL('../../src/metrics/', import.meta.url)))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => readFileSync(fileURLToPath(new URL(`../../src/metrics/${file}`, import.meta.url)), 'utf8'))
    .join('\n');
  for (const [name] of `${rule.seriesQuery} ${rule.metricsQuery}`.matchAll(/nv_[a-z_]+/g)) assert.ok(exported.includes(`'${name}'`), `the server exports no ${name}`);
});

test('the KServe runtimes serve what the InferenceServices ask, with real flags and paths', () => {
  const kserve = yamlFiles(join(DEPLOY, 'kserve')).flatMap(documents);
  const runtimes = kserve.filter((resource) => (resource.kind as string).endsWith('ServingRuntime')) as Array<{
    kind: string;
    metadata: { name: string };
    spec: { supportedModelFormats: Array<{ name: string }>; protocolVersions: string[]; containers: ContainerSpec[] };
  }>;
  assert.deepEqual(runtimes.map((runtime) => runtime.kind).sort(), ['ClusterServingRuntime', 'ServingRuntime']);
  for (const runtime of runtimes) {
    assert.deepEqual(runtime.spec.supportedModelFormats.map((format) => format.name).sort(), ['javascript', 'lightgbm', 'onnx', 'python', 'triton', 'xgboost']);
    assert.deepEqual(runtime.spec.protocolVersions, ['v2', 'grpc-v2']);
    const container = runtime.spec.containers[0]!;
    const options = optionsOf(container, runtime.kind);
    assert.deepEqual(options.modelRepositories, ['/mnt/models'], "KServe's storage initializer puts the models in /mnt/models");
    assert.equal(options.httpPort, 8080, "KServe's HTTP port");
    assert.equal(options.grpcPort, 9000, "KServe's gRPC port");
    assert.deepEqual(container.ports.map((port) => port.containerPort), [options.httpPort]);
    assert.deepEqual(matchRoute('GET', container.readinessProbe!.httpGet.path), { kind: 'health', check: 'ready' });
    assert.equal(container.readinessProbe!.httpGet.port, options.httpPort);
  }
  const services = kserve.filter((resource) => resource.kind === 'InferenceService') as Array<{ spec: { predictor: { model: { modelFormat: { name: string }; runtime: string; protocolVersion: string } } } }>;
  assert.equal(services.length, 2);
  for (const { spec } of services) {
    const runtime = runtimes.find((candidate) => candidate.metadata.name === spec.predictor.model.runtime);
    assert.ok(runtime !== undefined, spec.predictor.model.runtime);
    assert.ok(runtime.spec.supportedModelFormats.some((format) => format.name === spec.predictor.model.modelFormat.name));
    assert.ok(runtime.spec.protocolVersions.includes(spec.predictor.model.protocolVersion));
  }
});
