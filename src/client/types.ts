import type { DataType } from '../protocol/data-type.js';
import type { ModelMetadata, ServerMetadata } from '../protocol/metadata.js';
import type { ParameterValue } from '../protocol/parameters.js';
import type { RepositoryIndexEntry } from '../protocol/repository-index.js';
import type { ModelStatistics } from '../protocol/statistics.js';
import type { InferResult } from './infer-result.js';

export type { DataType } from '../protocol/data-type.js';
export type { ModelMetadata, ServerMetadata, TensorMetadata } from '../protocol/metadata.js';
export type { ParameterValue } from '../protocol/parameters.js';
export type { ModelState, RepositoryIndexEntry } from '../protocol/repository-index.js';
export type { BatchStatistics, Duration, InferenceStatistics, ModelStatistics } from '../protocol/statistics.js';
export type { TensorData, TensorDataByType } from '../protocol/tensor-data.js';

/** Request, tensor or load parameters (KServe v2 `parameters`); bigint for 64-bit values beyond 2^53. */
export type Parameters = Readonly<Record<string, ParameterValue>>;

/**
 * The data an input of each data type takes: the type's typed array (row major, little-endian on the
 * wire), or for convenience a plain array of values. FP16 and BF16 are their raw 16-bit patterns in a
 * Uint16Array. BYTES elements are strings (sent as UTF-8) or raw bytes.
 */
export interface InputDataByType {
  BOOL: Uint8Array | readonly boolean[];
  UINT8: Uint8Array | readonly number[];
  UINT16: Uint16Array | readonly number[];
  UINT32: Uint32Array | readonly number[];
  UINT64: BigUint64Array | readonly (bigint | number)[];
  INT8: Int8Array | readonly number[];
  INT16: Int16Array | readonly number[];
  INT32: Int32Array | readonly number[];
  INT64: BigInt64Array | readonly (bigint | number)[];
  FP16: Uint16Array;
  FP32: Float32Array | readonly number[];
  FP64: Float64Array | readonly number[];
  BYTES: readonly (string | Uint8Array)[];
  BF16: Uint16Array;
}

/** One input tensor. `datatype` decides what `data` may be, so a mismatch is a compile error. */
export type InferInput = {
  [T in DataType]: {
    readonly name: string;
    readonly datatype: T;
    /** With the batch dimension first when the model batches (max_batch_size > 0). */
    readonly shape: readonly number[];
    readonly data: InputDataByType[T];
    readonly parameters?: Parameters;
  };
}[DataType];

/**
 * Where a tensor lies in a system shared memory region the server knows (registered with
 * `registerSystemSharedMemory`): `byteSize` bytes from `offset` (default 0) of region `region`.
 */
export interface SharedMemoryPlace {
  readonly region: string;
  readonly byteSize: number;
  readonly offset?: number;
}

/** An input whose data the caller wrote into a registered system shared memory region (no data travels). */
export interface SharedMemoryInput {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly sharedMemory: SharedMemoryPlace;
  readonly parameters?: Parameters;
}

/** A registered system shared memory region, as the server lists it. */
export interface SharedMemoryRegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byteSize: number;
}

/** An output to compute and return; without `outputs`, the server returns every output. */
export interface RequestedOutput {
  readonly name: string;
  /**
   * Write this output into a registered system shared memory region instead of the response; the
   * response then lists it with its shape and empty data (read it from the region).
   */
  readonly sharedMemory?: SharedMemoryPlace;
  /** Classification extension: return the top k classes as BYTES "value:index[:label]" (tritonclient's class_count). */
  readonly classCount?: number;
  /** HTTP only: this output as binary data (true) or JSON (false); by default as the client's `binaryData`. */
  readonly binaryData?: boolean;
  readonly parameters?: Parameters;
}

/** Options every call takes. */
export interface CallOptions {
  /** Give up after this long, with a TimeoutError (over gRPC, the call's deadline). Default: the client's. */
  readonly timeoutMs?: number;
  /** Cancels the call, with an AbortError. */
  readonly signal?: AbortSignal;
  /** HTTP only: extra request headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A model version for the calls that take one: a version number, or by default the server's choice. */
export interface VersionOptions extends CallOptions {
  readonly version?: number | string;
}

export type Compression = 'gzip' | 'deflate' | 'none';

export interface InferOptions extends VersionOptions {
  /** The request id, echoed in the response. */
  readonly id?: string;
  readonly outputs?: readonly RequestedOutput[];
  /** Request priority (Triton's `priority` parameter): 1 is the highest level; 0 means the model's default. */
  readonly priority?: number;
  /**
   * The server-side timeout in microseconds (Triton's `timeout` parameter): a request still queued after
   * it is rejected, where the model's queue policy allows the override. Not the client's `timeoutMs`.
   */
  readonly timeoutUs?: number;
  /** Sequence batcher fields (Triton's `sequence_id`, `sequence_start`, `sequence_end` parameters). */
  readonly sequenceId?: number | bigint | string;
  readonly sequenceStart?: boolean;
  readonly sequenceEnd?: boolean;
  /** More request parameters, sent as given. */
  readonly parameters?: Parameters;
  /**
   * HTTP only: tensors as binary data after the JSON header (Triton's binary data extension, the
   * default) or as JSON `data` (false). FP16 and BF16 always travel binary: JSON cannot carry them.
   */
  readonly binaryData?: boolean;
  /**
   * Compresses the request (HTTP `Content-Encoding`, gRPC message compression) and, over HTTP, asks
   * for a compressed response (`Accept-Encoding`). Default: the client's, else none.
   */
  readonly compression?: Compression;
}

/**
 * A model configuration as the server sends it, with proto field names (`max_batch_size`, `input`, …).
 * NOTE: the two protocols write 64-bit integers differently, as Triton's do: HTTP as JSON numbers for
 * the fields Triton prints that way (`dims`, …), gRPC as decimal strings (`"dims": ["16"]`).
 */
export type ModelConfig = Readonly<Record<string, unknown>>;

export interface RepositoryIndexOptions extends CallOptions {
  /** Only the models ready for inference. */
  readonly ready?: boolean;
}

export interface LoadModelOptions extends CallOptions {
  /** A configuration that replaces config.pbtxt: JSON text or an object (Triton's `config` load parameter). */
  readonly config?: string | Readonly<Record<string, unknown>>;
  /** Model files by `<version>/<name>` path (Triton's `file:<path>` load parameters); needs `config`. */
  readonly files?: Readonly<Record<string, Uint8Array>>;
  /** More load parameters, sent as given. */
  readonly parameters?: Parameters;
}

export interface UnloadModelOptions extends CallOptions {
  /** Also unload the models that depend on this one (Triton's `unload_dependents`). */
  readonly unloadDependents?: boolean;
}

/** What HttpClient and GrpcClient both offer, so that code can take either. */
export interface InferenceClient {
  isServerLive(options?: CallOptions): Promise<boolean>;
  isServerReady(options?: CallOptions): Promise<boolean>;
  /** False for a model that is unknown, loading, failed or unloaded. */
  isModelReady(modelName: string, options?: VersionOptions): Promise<boolean>;
  serverMetadata(options?: CallOptions): Promise<ServerMetadata>;
  modelMetadata(modelName: string, options?: VersionOptions): Promise<ModelMetadata>;
  modelConfig(modelName: string, options?: VersionOptions): Promise<ModelConfig>;
  repositoryIndex(options?: RepositoryIndexOptions): Promise<RepositoryIndexEntry[]>;
  /** Loads or reloads a model (the server in explicit model control mode); resolves once it is loaded. */
  loadModel(modelName: string, options?: LoadModelOptions): Promise<void>;
  unloadModel(modelName: string, options?: UnloadModelOptions): Promise<void>;
  /** Every model's statistics without a name; every version of one, or one version. */
  modelStatistics(modelName?: string, options?: VersionOptions): Promise<ModelStatistics[]>;
  /** Runs an inference; inputs given as SharedMemoryInput are read by the server from their region. */
  infer(modelName: string, inputs: ReadonlyArray<InferInput | SharedMemoryInput>, options?: InferOptions): Promise<InferResult>;
  /**
   * System shared memory extension: registers `byteSize` bytes from `offset` of the POSIX shared memory
   * object `key` (e.g. a SystemSharedMemoryRegion's) as region `name`.
   */
  registerSystemSharedMemory(name: string, key: string, byteSize: number, options?: CallOptions & { readonly offset?: number }): Promise<void>;
  /** Every registered region, or the one named. */
  systemSharedMemoryStatus(name?: string, options?: CallOptions): Promise<SharedMemoryRegionStatus[]>;
  /** Unregisters the region named, or every region without a name. */
  unregisterSystemSharedMemory(name?: string, options?: CallOptions): Promise<void>;
  /** Closes the connections; calls still running fail with AbortError. */
  close(): Promise<void>;
}
