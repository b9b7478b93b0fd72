import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { modelConfigToTritonJson } from '../../config/model-config-json.js';
import { resolveConfinedPath } from '../../kernel/confined-path.js';
import { NereidError } from '../../kernel/errors.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Backend, BackendContext, BackendModel, InstanceSpec, ModelFiles } from '../backend.js';
import type { ModelInstance } from '../../kernel/model-instance.js';
import type { Tensor } from '../../kernel/tensor.js';
import { autoCompletePythonConfig } from './auto-complete.js';
import { PythonInstance } from './python-instance.js';
import { type StubSettings, readStubSettings } from './stub-settings.js';

const DEFAULT_MODEL_FILENAME = 'model.py';

/** The model file of a version folder, checked to exist and to lie inside the version folder. */
export async function resolveModelFile(files: ModelFiles, config: ModelConfig, defaultFilename: string): Promise<string> {
  const name = config.defaultModelFilename || defaultFilename;
  const path = join(files.versionDir, name);
  const isFile = await stat(path).then(
    (info) => info.isFile(),
    () => false,
  );
  if (!isFile) throw new NereidError('INVALID_ARG', `model '${files.modelName}' version ${files.version}: no model file at '${path}'`);
  return resolveConfinedPath({ folder: files.versionDir, path: name, field: `model '${files.modelName}' version ${files.version}: default_model_filename` });
}

export interface PythonModelOptions {
  readonly files: ModelFiles;
  readonly config: ModelConfig;
  readonly spec: ModelSpec;
  readonly context: BackendContext;
  readonly settings: StubSettings;
  /** The model.py every instance runs. */
  readonly modelFile: string;
  /**
   * Outputs reach the client with the data type and shape the model gave them, as in Triton's Python
   * backend (a warning once per output that differs from the configuration); false: they must match
   * it (the TorchScript runner, as Triton's libtorch backend).
   */
  readonly isOutputAsReturned: boolean;
}

/** A loaded Python model version: each instance is a process of its own running `modelFile`. */
export class PythonModel implements BackendModel {
  readonly #options: PythonModelOptions;
  /** The outputs already warned about, so that each is logged once per model version. */
  readonly #warnedOutputs = new Set<string>();

  constructor(options: PythonModelOptions) {
    this.#options = options;
  }

  createInstance(instance: InstanceSpec): Promise<ModelInstance> {
    const { files, config, spec, context, settings, modelFile, isOutputAsReturned } = this.#options;
    // Triton's initialize() arguments; every value is a string (python_backend README, "initialize").
    const args = {
      model_config: modelConfigToTritonJson(config),
      model_instance_kind: 'CPU',
      model_instance_name: instance.name,
      model_instance_device_id: '0',
      model_repository: files.modelDir,
      model_version: String(files.version),
      model_name: files.modelName,
    };
    return PythonInstance.start({
      name: instance.name,
      spec,
      settings,
      modelFile,
      argsJson: JSON.stringify(args),
      caller: context.caller,
      logger: context.logger,
      customMetrics: context.customMetrics,
      modelControl: context.modelControl,
      signal: instance.signal,
      ...(isOutputAsReturned ? { onOutputMismatch: (output: Tensor, mismatch: NereidError) => this.#warnOnce(output, mismatch) } : {}),
    });
  }

  #warnOnce(output: Tensor, mismatch: NereidError): void {
    if (this.#warnedOutputs.has(output.name)) return;
    this.#warnedOutputs.add(output.name);
    this.#options.context.logger.warning(
      'python',
      `${mismatch.message}; the client receives it as the model returned it, as Triton's Python backend passes it on (logged once per output)`,
    );
  }

  async unload(): Promise<void> {}
}

/**
 * Triton's Python backend: a `model.py` defining TritonPythonModel, run by python/nereid_python_stub.py
 * in one process per instance, with `triton_python_backend_utils` importable.
 */
export const pythonBackend: Backend = {
  name: 'python',
  defaultModelFilename: DEFAULT_MODEL_FILENAME,
  isModelFileCode: true,
  async autoCompleteConfig(files, config, context) {
    const modelFile = await resolveModelFile(files, config, DEFAULT_MODEL_FILENAME);
    return autoCompletePythonConfig({ modelFile, config, settings: await readStubSettings(config, files.modelDir), logger: context.logger });
  },
  async loadModel(files, config, spec, context) {
    const modelFile = await resolveModelFile(files, config, DEFAULT_MODEL_FILENAME);
    return new PythonModel({ files, config, spec, context, settings: await readStubSettings(config, files.modelDir), modelFile, isOutputAsReturned: true });
  },
};
