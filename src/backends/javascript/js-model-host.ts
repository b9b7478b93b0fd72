/**
 * What runs a JavaScript model instance, in its worker thread (js-worker.ts) or inline on the main
 * thread (inline-thread.ts): it imports the model file, calls `initialize`, then runs one `execute`
 * at a time. Calls to other models go to the instance (js-instance.ts) and come back as responses.
 * Anything the model does wrong becomes an error for the requests it affects.
 */
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { STATUS_CODES, type StatusCode } from '../../protocol/status-code.js';
import { epochMs } from '../worker-thread.js';
import type { FromWorker, JsWorkerInit, ToWorker, WireCallResponse, WireError, WireRequest, WireTensor } from './js-messages.js';
import type { CallResponse, InitializeArgs, JavaScriptModel, ModelCall, ModelRequest, ModelResponse, ResponseSender } from './model-api.js';
import { fromOutputTensor, toModelTensor } from './model-tensors.js';
import { AsyncQueue } from '../../util/async-queue.js';
import { deferred } from '../../util/deferred.js';

/** Marks the URL under which a model file is loaded as an ES module whatever package.json says. */
const AS_MODULE = 'nereid-es-module';
let isHookRegistered = false;
const AS_MODULE_HOOK = `data:text/javascript,${encodeURIComponent(
  `export async function load(url, context, next) {
    if (!/[?&]${AS_MODULE}$/.test(url)) return next(url, context);
    return { ...(await next(url, { ...context, format: 'module' })), format: 'module' };
  }`,
)}`;

/**
 * Imports the model file as Node would; a file written as an ES module (export default) under a
 * package.json that makes .js files CommonJS, as in most projects, is imported again as an ES module.
 */
async function importModel(path: string, query: string): Promise<{ default?: unknown }> {
  const url = `${pathToFileURL(path).href}${query}`;
  try {
    return (await import(url)) as { default?: unknown };
  } catch (error) {
    const isModuleSyntax = error instanceof SyntaxError || (error as NodeJS.ErrnoException).code === 'ERR_REQUIRE_CYCLE_MODULE';
    if (!isModuleSyntax) throw error;
    if (!isHookRegistered) register(AS_MODULE_HOOK);
    isHookRegistered = true;
    return (await import(`${url}${query === '' ? '?' : '&'}${AS_MODULE}`)) as { default?: unknown };
  }
}

async function loadModelClass(init: JsWorkerInit, query: string): Promise<new () => JavaScriptModel> {
  const module = await importModel(init.modelPath, query);
  // TypeScript compiled to CommonJS sets `exports.default`, which import() nests one level deeper.
  const nested = (module.default as { default?: unknown } | undefined)?.default;
  if (typeof module.default !== 'function' && typeof nested === 'function') return nested as new () => JavaScriptModel;
  if (typeof module.default !== 'function') {
    throw new TypeError(`'${init.modelPath}' must export a model class as its default export (export default class { execute(requests) { ... } })`);
  }
  return module.default as new () => JavaScriptModel;
}


/**
 * A request's cancellation, its AbortSignal made only when the model reads `request.signal`: most
 * models never do, and an AbortController per request is a measurable part of a small model's cost.
 */
class Cancellation {
  #controller: AbortController | undefined;
  #isCancelled = false;

  get isCancelled(): boolean {
    return this.#isCancelled;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#isCancelled) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    this.#isCancelled = true;
    this.#controller?.abort();
  }
}

/** The channel between the host and its instance: a worker's port, or direct calls inline. */
export interface ModelHostPort {
  post(message: FromWorker, transfer: ArrayBuffer[]): void;
  listen(handler: (message: ToWorker) => void): void;
  /** Ends the host: the worker exits, an inline host stops. */
  exit(code: number): void;
}

/**
 * Runs the model of `init` behind `port` until it is told to close. `query` is added to the model
 * file's URL: an inline host gives each start its own, so that a reloaded model file is imported
 * afresh rather than from the main thread's module cache (a worker starts with an empty one).
 */
export function hostModel(init: JsWorkerInit, port: ModelHostPort, query = ''): void {
  function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
    port.post(message, transfer);
  }


  /** A model's error for one request: its `status` when it names one of Triton's codes, else INTERNAL. */
  function wireError(error: unknown): WireError {
    const status = (error as { status?: unknown } | null)?.status;
    const message = error instanceof Error ? error.message : String(error);
    return { status: STATUS_CODES.includes(status as StatusCode) ? (status as StatusCode) : 'INTERNAL', message };
  }

  function wireOutputs(response: ModelResponse): { outputs: WireTensor[]; transfer: ArrayBuffer[] } {
    if (response === null || typeof response !== 'object' || !Array.isArray(response.outputs)) {
      throw new TypeError(`a response must be { outputs: [...] } or an Error, got ${response === null ? 'null' : typeof response}`);
    }
    const outputs: WireTensor[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const output of response.outputs) {
      const converted = fromOutputTensor(output);
      outputs.push(converted.wire);
      transfer.push(...converted.transfer);
    }
    return { outputs, transfer };
  }

  // Model-to-model calls waiting for the main thread.
  interface CallSink {
    onResponse(response: WireCallResponse): void;
    onEnd(error: WireError | undefined): void;
  }
  const calls = new Map<number, CallSink>();
  let nextCallId = 0;

  function callResponse(response: WireCallResponse | undefined, error?: WireError): CallResponse {
    const outputs = (response?.outputs ?? []).map(toModelTensor);
    return {
      modelName: response?.modelName ?? '',
      modelVersion: response?.modelVersion ?? '',
      outputs,
      output: (name) => outputs.find((output) => output.name === name),
      ...(error !== undefined ? { error } : {}),
    };
  }

  function startCall(call: ModelCall, isStream: boolean, sink: CallSink): void {
    const callId = nextCallId++;
    const transfer: ArrayBuffer[] = [];
    let inputs: WireTensor[];
    try {
      inputs = (call.inputs ?? []).map((input) => {
        const converted = fromOutputTensor(input);
        transfer.push(...converted.transfer);
        return converted.wire;
      });
    } catch (error) {
      sink.onEnd({ status: 'INVALID_ARG', message: `call to model '${call.model}': ${(error as Error).message}` });
      return;
    }
    calls.set(callId, sink);
    const parent = call.parent === undefined ? undefined : origins.get(call.parent);
    post(
      {
        type: 'call',
        callId,
        isStream,
        request: {
          modelName: call.model,
          ...(call.version !== undefined ? { modelVersion: call.version } : {}),
          id: call.id ?? '',
          inputs,
          ...(call.outputs !== undefined ? { requestedOutputs: call.outputs } : {}),
          parameters: call.parameters ?? {},
          ...(parent !== undefined ? { parent } : {}),
        },
      },
      transfer,
    );
  }

  function infer(call: ModelCall): Promise<CallResponse> {
    return new Promise((resolve) => {
      let answer: WireCallResponse | undefined;
      startCall(call, false, {
        onResponse: (response) => (answer = response),
        onEnd: (error) => resolve(callResponse(answer, error)),
      });
    });
  }

  function inferStream(call: ModelCall): AsyncIterable<CallResponse> {
    const responses = new AsyncQueue<CallResponse>();
    startCall(call, true, {
      onResponse: (response) => responses.push(callResponse(response)),
      onEnd: (error) => {
        if (error !== undefined) responses.push(callResponse(undefined, error));
        responses.end();
      },
    });
    return responses;
  }

  function log(level: 'info' | 'warning' | 'error' | 'verbose') {
    return (message: string): void => post({ type: 'log', level, message: String(message) });
  }

  /** One request of an execution, as the model sees it; a decoupled one tracks its final response. */
  interface ExecutionRequest extends ModelRequest {
    /** Resolves with the request's error, if it sent one, once its final response was sent. */
    readonly finished: Promise<WireError | undefined>;
  }

  /** Where each request `execute` received comes from, so that a call naming it as `parent` can say so. */
  const origins = new WeakMap<ModelRequest, { readonly execution: number; readonly index: number }>();

  /** The cancellation of each request of the executions running, by execution id and request index. */
  const cancellations = new Map<number, Cancellation[]>();

  function modelRequest(wire: WireRequest, executionId: number, index: number, cancellation: Cancellation): ExecutionRequest {
    const inputs = wire.inputs.map(toModelTensor);
    const finished = deferred<WireError | undefined>();
    let isFinal = false;
    const responseSender: ResponseSender = {
      send(response, options) {
        if (!init.isDecoupled) throw new Error(`model '${init.modelName}' is not decoupled: return its responses from execute() instead`);
        if (isFinal) throw new Error(`request '${wire.id}' already sent its final response`);
        isFinal = options?.final === true;
        if (response instanceof Error) {
          // With the final flag the error ends the request; without it, it fails this response alone (Triton's response sent with an error).
          if (isFinal) finished.resolve(wireError(response));
          else post({ type: 'response', id: executionId, index, outputs: wireError(response) });
          return;
        }
        if (response !== undefined) {
          const { outputs, transfer } = wireOutputs(response);
          post({ type: 'response', id: executionId, index, outputs }, transfer);
        }
        if (isFinal) finished.resolve(undefined);
      },
    };
    const request: ExecutionRequest = {
      id: wire.id,
      inputs,
      input: (name) => inputs.find((input) => input.name === name),
      requestedOutputs: wire.requestedOutputs,
      parameters: Object.fromEntries(Object.entries(wire.parameters).map(([key, value]) => [key, typeof value === 'bigint' ? Number(value) : value])),
      responseSender,
      get signal() {
        return cancellation.signal;
      },
      isCancelled: () => cancellation.isCancelled,
      finished: finished.promise,
    };
    origins.set(request, { execution: executionId, index });
    return request;
  }

  async function execute(model: JavaScriptModel, id: number, wires: readonly WireRequest[]): Promise<void> {
    const controllers = cancellations.get(id)!;
    const requests = wires.map((wire, index) => modelRequest(wire, id, index, controllers[index]!));
    const startMs = epochMs();
    const responses: Array<WireTensor[] | WireError> = [];
    const transfer: ArrayBuffer[] = [];
    try {
      const result = await model.execute(requests);
      if (init.isDecoupled) {
        for (const error of await Promise.all(requests.map((request) => request.finished))) responses.push(error ?? []);
      } else {
        if (!Array.isArray(result) || result.length !== requests.length) {
          throw new TypeError(`execute() must return one response per request (${requests.length}), got ${Array.isArray(result) ? `${result.length}` : typeof result}`);
        }
        for (const response of result as ReadonlyArray<ModelResponse | Error>) {
          if (response instanceof Error) {
            responses.push(wireError(response));
            continue;
          }
          try {
            const converted = wireOutputs(response);
            responses.push(converted.outputs);
            transfer.push(...converted.transfer);
          } catch (error) {
            responses.push(wireError(error));
          }
        }
      }
    } catch (error) {
      responses.length = 0;
      for (let index = 0; index < requests.length; index++) responses.push(wireError(error));
    }
    cancellations.delete(id);
    post({ type: 'executed', id, responses, startMs, endMs: epochMs() }, transfer);
  }

  async function main(): Promise<void> {
    const ModelClass = await loadModelClass(init, query);
    if (init.mode === 'auto-complete') {
      const hook = (ModelClass as unknown as { autoCompleteConfig?: (config: Record<string, unknown>) => unknown }).autoCompleteConfig;
      const completed = hook === undefined ? undefined : await hook.call(ModelClass, structuredClone(init.config) as Record<string, unknown>);
      if (completed !== undefined && (completed === null || typeof completed !== 'object')) {
        throw new TypeError(`static autoCompleteConfig() must return the configuration object, got ${completed === null ? 'null' : typeof completed}`);
      }
      post({ type: 'auto-completed', config: completed as Record<string, unknown> | undefined });
      return;
    }
    const model = new ModelClass();
    if (typeof model.execute !== 'function') throw new TypeError(`the model class in '${init.modelPath}' has no execute(requests) method`);
    const args: InitializeArgs = {
      modelConfig: init.config,
      modelName: init.modelName,
      modelVersion: init.modelVersion,
      modelRepository: init.modelRepository,
      modelInstanceName: init.instanceName,
      modelInstanceKind: 'CPU',
      infer,
      inferStream,
      log: { info: log('info'), warning: log('warning'), error: log('error'), verbose: log('verbose') },
    };
    await model.initialize?.(args);
    let queue = Promise.resolve();
    port.listen((message) => {
      switch (message.type) {
        case 'execute':
          // Made now, so that a request cancelled while an earlier execute runs starts out cancelled.
          cancellations.set(message.id, message.requests.map(() => new Cancellation()));
          queue = queue.then(() => execute(model, message.id, message.requests));
          break;
        case 'cancel':
          cancellations.get(message.id)?.[message.index]?.abort();
          break;
        case 'call-response':
          calls.get(message.callId)?.onResponse(message.response);
          break;
        case 'call-end': {
          const sink = calls.get(message.callId);
          calls.delete(message.callId);
          if (message.response !== undefined) sink?.onResponse(message.response);
          sink?.onEnd(message.error);
          break;
        }
        case 'close':
          queue = queue.then(async () => {
            await model.finalize?.();
            port.exit(0);
          });
          break;
      }
    });
    post({ type: 'ready' });
  }

  main().catch((error: unknown) => {
    // The first frame says where in the model's file it went wrong.
    const where = error instanceof Error ? error.stack?.split('\n').find((line) => line.trim().startsWith('at ') || line.includes('file://')) : undefined;
    post({ type: 'init-error', message: `${error instanceof Error ? error.message : String(error)}${where !== undefined ? ` (${where.trim()})` : ''}` });
    port.exit(0);
  });
}
