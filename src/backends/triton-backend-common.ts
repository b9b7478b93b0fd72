/**
 * What Triton's C++ backends share when they check a configuration (backend_common's ShapeToString,
 * std::stoi's range), and Nereid's rule for a backend's `parameters`: one it does not read is refused,
 * where Triton's backends ignore it (fil, identity, repeat, square), and the error of an execution cut short
 * by its instance's close (identity, repeat, square).
 */
import type { ModelConfig } from '../protocol/gen/model_config_pb.js';
import { closestName } from '../config/closest-name.js';
import { NereidError } from '../kernel/errors.js';

/** std::stoi's limit: a larger value throws std::out_of_range in a Triton backend. */
export const STOI_MAX = 2_147_483_647;

/** Triton's backend::ShapeToString: `[-1,4]`. */
export const shapeText = (shape: readonly number[]): string => `[${shape.join(',')}]`;

/**
 * Refuses the first parameter of `config` that `backendName` does not read, naming the nearest known
 * one and all of them: Nereid never ignores a configuration field it would otherwise not implement.
 */
export function refuseUnknownParameters(config: ModelConfig, backendName: string, known: readonly string[]): void {
  for (const key of Object.keys(config.parameters)) {
    if (known.includes(key)) continue;
    const near = closestName(key, known);
    throw new NereidError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${key}' is not one the ${backendName} backend knows${near === undefined ? '' : ` (did you mean '${near}'?)`}; ${known.length === 0 ? 'it reads none' : `it knows ${known.join(', ')}`}`,
    );
  }
}

/** UNAVAILABLE: instance `instanceName` of model `modelName` was closed `when` (say, "before the request finished"). */
export const instanceStopped = (instanceName: string, modelName: string, when: string): NereidError =>
  new NereidError('UNAVAILABLE', `instance '${instanceName}' of model '${modelName}' was stopped ${when}`);
