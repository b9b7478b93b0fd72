import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { modelConfigFromJson, modelConfigToTritonJson } from '../../config/model-config-json.js';
import { resolveConfinedPath } from '../../kernel/confined-path.js';
import { NereidError } from '../../kernel/errors.js';
import type { Backend, ModelFiles } from '../backend.js';
import { startWorker, workerUrl } from '../worker-thread.js';
import type { FromWorker, JsWorkerInit } from './js-messages.js';
import { JsInstance } from './js-instance.js';

const DEFAULT_MODEL_FILENAME = 'model.js';
const WORKER_URL = workerUrl('./js-worker', import.meta.url);
/** Default for config parameter `execute_timeout_ms`: an execution running longer fails and its instance restarts. */
const DEFAULT_EXECUTE_TIMEOUT_MS = 60_000;
const AUTO_COMPLETE_TIMEOUT_MS = 30_000;

/** The model file: `default_model_filename`, else model.js, else model.mjs. */
async function resolveModelPath(files: ModelFiles, config: ModelConfig): Promise<string> {
  const candidates = config.defaultModelFilename ? [config.defaultModelFilename] : [DEFAULT_MODEL_FILENAME, 'model.mjs'];
  for (const name of candidates) {
    const path = join(files.versionDir, name);
    if ((await stat(path).catch(() => undefined))?.isFile() === true) return resolveConfinedPath({ folder: files.versionDir, path: name, field: `model '${files.modelName}' version ${files.version}: default_model_filename` });
  }
  throw new NereidError(
    'INVALID_ARG',
    `model '${files.modelName}' version ${files.version}: no model file at ${candidates.map((name) => `'${join(files.versionDir, name)}'`).join(' or ')}; a JavaScript model is a module whose default export is the model class`,
  );
}

function executeTimeoutMs(config: ModelConfig): number {
  const text = config.parameters.execute_timeout_ms?.stringValue;
  if (text === undefined) return DEFAULT_EXECUTE_TIMEOUT_MS;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new NereidError('INVALID_ARG', `model '${config.name}': parameter execute_timeout_ms is '${text}'; expected a whole number of milliseconds (0: no limit)`);
  }
  return value;
}

/** Config parameter `run_inline` ("true" or "false", the default): run the model on the main thread. */
function isInline(config: ModelConfig): boolean {
  const text = config.parameters.run_inline?.stringValue;
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  throw new NereidError('INVALID_ARG', `model '${config.name}': parameter run_inline is '${text}'; expected 'true' or 'false'`);
}

function workerInit(files: ModelFiles, config: ModelConfig, modelPath: string, mode: JsWorkerInit['mode'], instanceName: string): JsWorkerInit {
  return {
    mode,
    modelPath,
    config: JSON.parse(modelConfigToTritonJson(config)) as Record<string, unknown>,
    modelName: files.modelName,
    modelVersion: files.version,
    modelRepository: files.modelDir,
    instanceName,
    isDecoupled: config.modelTransactionPolicy?.decoupled === true,
  };
}

/** Runs the model class's static `autoCompleteConfig(config)` in a worker of its own, if it has one. */
async function autoCompleteConfig(files: ModelFiles, config: ModelConfig): Promise<ModelConfig> {
  const modelPath = await resolveModelPath(files, config);
  const worker = startWorker(WORKER_URL, workerInit(files, config, modelPath, 'auto-complete', `${files.modelName}_auto_complete`));
  const completed = await new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
    const timer = setTimeout(() => reject(new NereidError('INVALID_ARG', `model '${files.modelName}': autoCompleteConfig() did not return within ${AUTO_COMPLETE_TIMEOUT_MS} ms`)), AUTO_COMPLETE_TIMEOUT_MS);
    worker.on('message', (message: FromWorker) => {
      clearTimeout(timer);
      if (message.type === 'auto-completed') resolve(message.config);
      else if (message.type === 'init-error') reject(new NereidError('INVALID_ARG', `model '${files.modelName}': ${message.message}`));
    });
    worker.on('error', (error) => reject(new NereidError('INVALID_ARG', `model '${files.modelName}': ${error.message}`)));
  }).finally(() => void worker.terminate());
  if (completed === undefined) return config;
  return modelConfigFromJson(JSON.stringify(completed), `the configuration autoCompleteConfig() of '${modelPath}' returned`);
}

/** Models written in JavaScript (or compiled to it): one worker thread per instance, or inline on the main thread. */
export const javascriptBackend: Backend = {
  name: 'javascript',
  defaultModelFilename: DEFAULT_MODEL_FILENAME,
  isModelFileCode: true,
  autoCompleteConfig,
  async loadModel(files, config, spec, context) {
    const modelPath = await resolveModelPath(files, config);
    const timeoutMs = executeTimeoutMs(config);
    const inline = isInline(config);
    return {
      createInstance: (instance) =>
        JsInstance.start({
          init: workerInit(files, config, modelPath, 'initialize', instance.name),
          spec,
          caller: context.caller,
          logger: context.logger,
          executeTimeoutMs: timeoutMs,
          isInline: inline,
          signal: instance.signal,
        }),
      unload: async () => {},
    };
  },
};
