import type { CombinedSignal } from '../../util/every-aborted.js';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest, InferResponse } from '../../kernel/infer-request.js';
import type { ModelCaller } from '../../kernel/model-caller.js';
import { FrameWriter, type FrameReader } from './frame-codec.js';
import { Kind, type StubResponse, fromStubRequestFields, readRequest, writeResponse } from './stub-protocol.js';

/** Sends a message to the Python process that made the call (if it is still the one running). */
export type SendToStub = (kind: number, writer: FrameWriter) => void;

export interface BlsRequestOptions {
  readonly caller: ModelCaller;
  readonly send: SendToStub;
  /** Cancels the call; released once the call is done. */
  readonly cancel?: CombinedSignal | undefined;
  /** The request `index` of execution `execId` that the process is running, if it still is. */
  readonly requestOf: (execId: number, index: number) => InferRequest | undefined;
}

/**
 * Business Logic Scripting: a Python model's `pb_utils.InferenceRequest(...).exec()` arrives as a
 * BLS_REQUEST and runs on the target model through the ModelCaller (its validation and scheduler),
 * whatever its backend. The answer goes back as BLS_RESPONSE messages: one final response for
 * `exec()`, or each response of a streaming call then a final message. Errors travel as response
 * errors, as in Triton, never as failures of the calling model. A call made with
 * `trace=request.trace()` names the request it serves; when that request is traced, the call is
 * traced as its child (Triton's python_backend spawns a child trace of the request's).
 */
export function runBlsRequest(reader: FrameReader, { caller, send, cancel, requestOf }: BlsRequestOptions): void {
  const signal = cancel?.signal;
  const blsId = reader.u32();
  const isStream = reader.u8() !== 0;
  const modelName = reader.str();
  const version = reader.i64();
  const parent = reader.u8() !== 0 ? requestOf(reader.u32(), reader.u32()) : undefined;
  const stubRequest = readRequest(reader);
  const trace = parent?.trace?.child();
  const request: InferRequest = {
    modelName,
    ...(version >= 0 ? { modelVersion: version } : {}),
    id: stubRequest.id,
    inputs: stubRequest.inputs,
    ...(stubRequest.requestedOutputs.length > 0 ? { outputs: stubRequest.requestedOutputs.map((name) => ({ name })) } : {}),
    parameters: fromStubRequestFields(stubRequest),
    ...(trace !== undefined ? { trace } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
  const reply = (isFinal: boolean, response: StubResponse | undefined): void => {
    const writer = new FrameWriter().u32(blsId).u8(isFinal ? 1 : 0).u8(response === undefined ? 0 : 1);
    if (response !== undefined) writeResponse(writer, response);
    send(Kind.BlsResponse, writer);
  };
  const toResponse = (response: InferResponse): StubResponse => ({ outputs: response.outputs, parameters: response.parameters });
  const call = isStream
    ? caller.inferStream(request, (response) => reply(false, response instanceof NereidError ? { error: response } : toResponse(response))).then(() => reply(true, undefined))
    : caller.infer(request).then((response) => reply(true, toResponse(response)));
  call
    .catch((error: unknown) => {
      const failure = error instanceof NereidError ? error : new NereidError('INTERNAL', `request to model '${modelName}' failed: ${(error as Error).message}`);
      reply(true, { error: failure });
    })
    .finally(() => {
      cancel?.release();
      trace?.end();
    });
}
