import type { NereidError } from '../kernel/errors.js';

/**
 * Triton's SageMaker front end (server src/sagemaker_server.cc): one more HTTP port serving Amazon
 * SageMaker's container contract, /ping and /invocations, and the multi-model endpoint's /models.
 */
export interface SageMakerSettings {
  /** `--sagemaker-port`, 8080 by default; on 0.0.0.0. */
  readonly port: number;
  /** `--sagemaker-safe-port-range LOW-HIGH`: the ports every other service on 0.0.0.0 must use. */
  readonly safePortRange?: { readonly low: number; readonly high: number };
  /** SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: the model /invocations infers on. */
  readonly defaultModel: string;
  /** SAGEMAKER_TRITON_INFERENCE_TYPE: infer (default), generate or generate_stream; any other is refused per request, as Triton's. */
  readonly inferenceType: string;
  /** SAGEMAKER_TRITON_PING_MODE: `live` answers /ping with liveness, anything else (default `ready`) with readiness. */
  readonly pingMode: string;
  /** `--sagemaker-mme-root` (Nereid's): the folder the multi-model endpoint loads models from, SageMaker's /opt/ml/models by default. */
  readonly mmeRoot: string;
}

/** What the SAGEMAKER_TRITON_* environment sets, with Triton's defaults (sagemaker_server.h). */
export function readSageMakerEnvironment(env: Readonly<Record<string, string | undefined>>): Pick<SageMakerSettings, 'defaultModel' | 'inferenceType' | 'pingMode'> {
  return {
    defaultModel: env.SAGEMAKER_TRITON_DEFAULT_MODEL_NAME ?? 'unspecified_SAGEMAKER_TRITON_DEFAULT_MODEL_NAME',
    inferenceType: env.SAGEMAKER_TRITON_INFERENCE_TYPE ?? 'infer',
    pingMode: env.SAGEMAKER_TRITON_PING_MODE ?? 'ready',
  };
}

/** `--sagemaker-safe-port-range LOW-HIGH`, refused in Triton's words (ParsePairOption) when it is not two integers. */
export function parseSafePortRange(text: string, fail: (message: string) => NereidError): { low: number; high: number } {
  const parts = text.split('-');
  if (parts.length !== 2) {
    throw fail(`Cannot parse pair option due to incorrect number of inputs.--sagemaker-safe-port-range argument requires format <first>-<second>. Found: ${text}`);
  }
  const [low, high] = parts.map((part) => (/^[0-9]+$/.test(part) ? Number(part) : Number.NaN)) as [number, number];
  if (!Number.isInteger(low) || !Number.isInteger(high) || low > 65535 || high > 65535) {
    throw fail(`--sagemaker-safe-port-range takes two port numbers, <first>-<second>, got '${text}'`);
  }
  return { low, high };
}
