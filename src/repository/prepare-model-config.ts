import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import type { Backend, BackendContext } from '../backends/backend.js';
import { ENSEMBLE_PLATFORM } from '../backends/ensemble/ensemble-backend.js';
import { BACKENDS, PLATFORMS, findBackend } from '../backends/index.js';
import { type ModelConfig, ModelConfigSchema } from '../protocol/gen/model_config_pb.js';
import { modelConfigFromJson } from '../config/model-config-json.js';
import { normalizeModelConfig } from '../config/normalize.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { refuseUnsupportedFields } from '../config/supported-fields.js';
import { validateModelConfig } from '../config/validate.js';
import { NereidError } from '../kernel/errors.js';
import { CODE_UPLOAD_HINT } from './load-override.js';

export interface PrepareOptions {
  readonly name: string;
  readonly modelDir: string;
  /** A version folder to read the model from when the config must be completed. */
  readonly versionDir: string | undefined;
  readonly version: number | undefined;
  readonly isAutoCompleteEnabled: boolean;
  readonly context: BackendContext;
  /** A load request's `config` parameter: JSON used instead of config.pbtxt. */
  readonly configJson?: string;
  /** `--model-config-name`: configs/<name>.pbtxt is read instead of config.pbtxt where the model has it. */
  readonly configName?: string;
  /** The model files came with a load request and code uploads are off: refuse a backend that runs them. */
  readonly isModelCodeRefused?: boolean;
  /** The folder is known by a name a repository registration mapped to it: the config takes that name, whatever it says (Triton's core). */
  readonly isNameMapped?: boolean;
}

const fileExists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The backend whose default model file is in the version folder, for a config that names none. */
async function detectBackend(versionDir: string | undefined): Promise<Backend | undefined> {
  if (versionDir === undefined) return undefined;
  for (const backend of BACKENDS.values()) {
    if (backend.defaultModelFilename !== '' && (await fileExists(join(versionDir, backend.defaultModelFilename)))) return backend;
  }
  return undefined;
}

/**
 * The configuration file of a model: with `--model-config-name NAME`, configs/NAME.pbtxt where the model
 * has one, as Triton chooses it at each load (docs/user_guide/model_configuration.md, "Custom Model
 * Configuration"); config.pbtxt otherwise.
 */
async function configFileOf(modelDir: string, configName: string | undefined): Promise<string> {
  if (configName !== undefined) {
    const custom = join(modelDir, 'configs', `${configName}.pbtxt`);
    if (await fileExists(custom)) return custom;
  }
  return join(modelDir, 'config.pbtxt');
}

/**
 * Reads a model's configuration and makes it complete: parse config.pbtxt (or start empty), find the
 * backend, let it auto-complete, fill Triton's defaults, validate, refuse what Nereid does not
 * implement (config/supported-fields.ts). Errors name the file and field.
 */
export async function prepareModelConfig(options: PrepareOptions): Promise<{ config: ModelConfig; backend: Backend }> {
  const isOverride = options.configJson !== undefined;
  const file = isOverride ? `load parameter 'config' of '${options.name}'` : await configFileOf(options.modelDir, options.configName);
  const text = isOverride
    ? undefined
    : await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw new NereidError('INVALID_ARG', `cannot read '${file}': ${error.message}`);
      });
  if (!isOverride && text === undefined && !options.isAutoCompleteEnabled) {
    throw new NereidError(
      'INVALID_ARG',
      `model '${options.name}' has no config.pbtxt; with --disable-auto-complete-config every model needs one (expected '${file}')`,
    );
  }
  let config = isOverride
    ? modelConfigFromJson(options.configJson!, file)
    : text === undefined
      ? create(ModelConfigSchema)
      : parseModelConfig(text, file);
  if (config.name !== '' && config.name !== options.name && options.isNameMapped !== true) {
    throw new NereidError(
      'INVALID_ARG',
      `${file}: name '${config.name}' does not match the model folder '${options.name}'; expected the folder name or no name`,
    );
  }
  config.name = options.name;

  const backend =
    findBackend(config.backend, config.platform) ??
    (config.backend === '' && config.platform === '' ? await detectBackend(options.versionDir) : undefined);
  if (backend === undefined) {
    const named = config.backend !== '' ? `backend '${config.backend}'` : config.platform !== '' ? `platform '${config.platform}'` : undefined;
    throw new NereidError(
      'INVALID_ARG',
      named !== undefined
        ? `${file}: unknown ${named}; Nereid serves backends ${[...BACKENDS.keys()].map((n) => `'${n}'`).join(', ')} and platforms ${[...PLATFORMS.keys()].map((n) => `'${n}'`).join(', ')}`
        : `model '${options.name}' has no config.pbtxt naming a backend or platform, and no version folder holds a file a backend recognises (${[...BACKENDS.values()].flatMap((b) => (b.defaultModelFilename === '' ? [] : [b.defaultModelFilename])).join(', ')})`,
    );
  }
  if (options.isModelCodeRefused === true && backend.isModelFileCode) {
    // Before auto-complete, which imports a JavaScript model. The file endings were checked already;
    // this catches a config that points a code backend at a file with any other ending.
    throw new NereidError('INVALID_ARG', `model '${options.name}': backend '${backend.name}' runs its model files as code, and these came from the load request; ${CODE_UPLOAD_HINT}`);
  }
  // Triton leaves an ensemble's backend empty: it has none.
  if (config.backend === '' && config.platform !== ENSEMBLE_PLATFORM) config.backend = backend.name;
  if (config.platform === '') config.platform = [...PLATFORMS].find(([, name]) => name === backend.name)?.[0] ?? '';

  if (options.isAutoCompleteEnabled && backend.autoCompleteConfig !== undefined && options.versionDir !== undefined) {
    config = await backend.autoCompleteConfig(
      { modelName: options.name, modelDir: options.modelDir, version: options.version!, versionDir: options.versionDir },
      config,
      options.context,
    );
  }
  config = normalizeModelConfig(config, { modelName: options.name });
  validateModelConfig(config, {
    file,
    isKnownBackend: (name) => BACKENDS.has(name),
    isKnownPlatform: (name) => name === ENSEMBLE_PLATFORM || PLATFORMS.has(name),
  });
  refuseUnsupportedFields(config);
  return { config, backend };
}
