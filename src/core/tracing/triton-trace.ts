import type { RequestTrace, TraceTensorActivity, TraceTimestampName } from '../../kernel/request-trace.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { TraceLevel } from '../../kernel/trace-settings.js';

export interface TritonTraceOptions {
  readonly id: number;
  /** The trace of the request that made this one (an ensemble's, a calling model's). */
  readonly parentId?: number;
  readonly level: TraceLevel;
  readonly spawn: (parentId: number) => RequestTrace;
  /** Receives the trace's records, in Triton's JSON, once it ends. */
  readonly complete: (records: string[]) => void;
}

/** A tensor's elements as Triton's trace writes them: comma-separated, BYTES elements as their text. */
function tensorDataText(tensor: Tensor): string {
  const data = tensor.data as ArrayLike<unknown>;
  const parts: string[] = new Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const value = data[i];
    parts[i] = value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8') : String(value);
  }
  return parts.join(',');
}

/**
 * One request's trace in Triton mode: its records, in Triton's JSON trace layout
 * (docs/user_guide/trace.md), kept as JSON text from the moment they happen:
 *
 *     {"id":1,"model_name":"simple","model_version":1,"request_id":"r1","parent_id":7}
 *     {"id":1,"timestamps":[{"name":"HTTP_RECV_START","ns":2356425054587444}]}   one per timestamp
 *     {"id":1,"activity":"TENSOR_QUEUE_INPUT","tensor":{"name":"INPUT0","data":"1,2","shape":"1,2","dtype":"INT32"}}
 *
 * NOTE: `ns` is written as the exact integer of process.hrtime.bigint(), which may pass 2^53 on a
 * machine up for more than 104 days; JSON.stringify cannot write a bigint, hence the hand-made text.
 */
export class TritonTrace implements RequestTrace {
  readonly #options: TritonTraceOptions;
  #model: string | undefined;
  readonly #records: string[] = [];
  #isEnded = false;

  constructor(options: TritonTraceOptions) {
    this.#options = options;
  }

  get id(): number {
    return this.#options.id;
  }

  setModel(name: string, version: number, requestId: string): void {
    const id = requestId !== '' ? `,"request_id":${JSON.stringify(requestId)}` : '';
    const parent = this.#options.parentId !== undefined ? `,"parent_id":${this.#options.parentId}` : '';
    this.#model = `{"id":${this.#options.id},"model_name":${JSON.stringify(name)},"model_version":${version}${id}${parent}}`;
  }

  timestamp(name: TraceTimestampName, ns: bigint = process.hrtime.bigint()): void {
    if (this.#isEnded || !this.#options.level.timestamps) return;
    this.#records.push(`{"id":${this.#options.id},"timestamps":[{"name":"${name}","ns":${ns}}]}`);
  }

  tensors(activity: TraceTensorActivity, tensors: readonly Tensor[]): void {
    if (this.#isEnded || !this.#options.level.tensors) return;
    for (const tensor of tensors) {
      const detail = `{"name":${JSON.stringify(tensor.name)},"data":${JSON.stringify(tensorDataText(tensor))},"shape":"${tensor.shape.join(',')}","dtype":"${tensor.dataType}"}`;
      this.#records.push(`{"id":${this.#options.id},"activity":"${activity}","tensor":${detail}}`);
    }
  }

  child(): RequestTrace {
    return this.#options.spawn(this.#options.id);
  }

  end(): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    const model = this.#model ?? `{"id":${this.#options.id}${this.#options.parentId !== undefined ? `,"parent_id":${this.#options.parentId}` : ''}}`;
    this.#options.complete([model, ...this.#records]);
  }
}
