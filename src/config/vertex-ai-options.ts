import type { NereidError } from '../kernel/errors.js';

/**
 * Triton's Vertex AI front end (server src/vertex_ai_server.cc): one more HTTP port, whose health route
 * answers Vertex AI's probes and whose predict route infers on the default model, or passes the request
 * on to the KServe v2 path named by its `X-Vertex-Ai-Triton-Redirect` header.
 */
export interface VertexAiSettings {
  /** `--vertex-ai-port`: AIP_HTTP_PORT where it is set, 8080 otherwise. */
  readonly port: number;
  /** `--vertex-ai-default-model`: the model the predict route infers on; undefined: the repository's only ready model. */
  readonly defaultModel?: string;
  /** AIP_PREDICT_ROUTE, a regular expression the whole path must match; '' where unset (the service then fails to start, as Triton's). */
  readonly predictRoute: string;
  /** AIP_HEALTH_ROUTE, as predictRoute. */
  readonly healthRoute: string;
}

/** What the Vertex AI environment (AIP_*) changes in the server's defaults before the flags are read, as Triton's command line parser does. */
export interface VertexAiEnvironment {
  /** AIP_MODE=PREDICTION: the Vertex AI front end on by default, HTTP and gRPC off by default. */
  readonly isPredictionMode: boolean;
  /** AIP_HTTP_PORT, or 8080. */
  readonly port: number;
  /** AIP_STORAGE_URI: the model repository when no --model-repository is given; undefined when unset or empty. */
  readonly storageUri: string | undefined;
  readonly predictRoute: string;
  readonly healthRoute: string;
}

/** Reads the AIP_* variables; throws `fail(message)` for an AIP_HTTP_PORT that is no port, which Triton reads even when Vertex AI is off. */
export function readVertexAiEnvironment(env: Readonly<Record<string, string | undefined>>, fail: (message: string) => NereidError): VertexAiEnvironment {
  const portText = env.AIP_HTTP_PORT ?? '8080';
  const port = Number(portText);
  if (!/^[0-9]+$/.test(portText) || port > 65535) throw fail(`AIP_HTTP_PORT takes a port number (the Vertex AI port), got '${portText}'`);
  return {
    isPredictionMode: env.AIP_MODE === 'PREDICTION',
    port,
    storageUri: env.AIP_STORAGE_URI === undefined || env.AIP_STORAGE_URI === '' ? undefined : env.AIP_STORAGE_URI,
    predictRoute: env.AIP_PREDICT_ROUTE ?? '',
    healthRoute: env.AIP_HEALTH_ROUTE ?? '',
  };
}
