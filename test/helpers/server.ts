import { fileURLToPath } from 'node:url';
import { type StartOptions, startServer } from '../../src/server.js';
import { silentLogger } from '../../src/logging/logger.js';

export const EXAMPLES = fileURLToPath(new URL('../../examples/model_repository', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../fixtures/model_repository', import.meta.url));

export interface TestServer {
  readonly url: string;
  readonly metricsUrl: string | undefined;
  readonly grpcUrl: string | undefined;
  get(path: string, init?: RequestInit): Promise<Response>;
  post(path: string, body: unknown, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts the real server on a free port of 127.0.0.1 with the given repositories, logging nothing. It
 * keeps serving when a model fails to load (`--exit-on-error=false`): the fixtures hold models that fail
 * on purpose, which the tests ask about.
 */
export async function startTestServer(options: Partial<StartOptions> & { modelRepositories: readonly string[] }): Promise<TestServer> {
  const server = await startServer({
    httpPort: 0,
    httpAddress: '127.0.0.1',
    grpcPort: 0,
    grpcAddress: '127.0.0.1',
    metricsPort: 0,
    logger: silentLogger,
    isExitOnError: false,
    ...options,
  });
  const url = server.httpUrl!;
  return {
    url,
    metricsUrl: server.metricsUrl,
    grpcUrl: server.grpcUrl,
    get: (path, init) => fetch(url + path, init),
    // Text bodies go as application/json, as tritonclient sends them: fetch's own text/plain is the
    // content type the server refuses on control routes (any web page can send it).
    post: (path, body, init) => {
      const headers = new Headers(init?.headers);
      if (!(body instanceof Uint8Array) && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return fetch(url + path, {
        method: 'POST',
        body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
        ...init,
        headers,
      });
    },
    close: () => server.shutdown(),
  };
}

/** Splits a binary-extension response into its JSON header and the binary data after it. */
export async function readInferResponse(response: Response): Promise<{ json: InferResponseJson; binary: Buffer }> {
  const body = Buffer.from(await response.arrayBuffer());
  const headerLength = response.headers.get('inference-header-content-length');
  const jsonEnd = headerLength === null ? body.byteLength : Number(headerLength);
  return { json: JSON.parse(body.toString('utf8', 0, jsonEnd)) as InferResponseJson, binary: body.subarray(jsonEnd) };
}

/**
 * The binary outputs of a response by name, cut from the data after the JSON header by their
 * `binary_data_size`; throws when the sizes do not add up to the data.
 */
export function binaryOutputs(json: InferResponseJson, binary: Buffer): Map<string, Buffer> {
  let offset = 0;
  const byName = new Map<string, Buffer>();
  for (const output of json.outputs) {
    const size = output.parameters!.binary_data_size as number;
    byName.set(output.name, binary.subarray(offset, offset + size));
    offset += size;
  }
  if (offset !== binary.byteLength) throw new Error(`binary outputs add up to ${offset} bytes, but ${binary.byteLength} came`);
  return byName;
}

export interface InferResponseJson {
  model_name: string;
  model_version: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs: Array<{ name: string; datatype: string; shape: number[]; data?: unknown[]; parameters?: Record<string, unknown> }>;
  error?: string;
}

/** Builds a request body with a JSON header followed by binary tensors, as tritonclient.http sends it. */
export function binaryBody(header: unknown, tensors: readonly Uint8Array[]): { body: Buffer; headers: Record<string, string> } {
  const json = Buffer.from(JSON.stringify(header));
  return {
    body: Buffer.concat([json, ...tensors]),
    headers: { 'inference-header-content-length': String(json.byteLength), 'content-type': 'application/octet-stream' },
  };
}

export const bytesOf = (array: ArrayBufferView): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
