/**
 * Nereid's client library (`import { HttpClient, GrpcClient } from 'nereid/client'`): the KServe v2
 * HTTP/REST and gRPC protocols with Triton's extensions, for Nereid, Triton or any KServe v2 server.
 */
export { HttpClient } from './http-client.js';
export type { HttpClientOptions, HttpTlsOptions } from './http-client.js';
export { GrpcClient } from './grpc-client.js';
export type { GrpcClientOptions } from './grpc-client.js';
export { InferStream } from './infer-stream.js';
export type { StreamInferOptions, StreamOptions, StreamResponse } from './infer-stream.js';
export { InferResult } from './infer-result.js';
export { SystemSharedMemoryRegion } from './shared-memory-region.js';
export type { InferOutput, InferResultFields } from './infer-result.js';
export { AbortError, ClientError, ConnectionError, ServerError, TimeoutError } from './errors.js';
export type { StatusCode, TransportStatus } from './errors.js';
export type {
  BatchStatistics,
  CallOptions,
  Compression,
  DataType,
  Duration,
  InferInput,
  InferOptions,
  InferenceClient,
  InferenceStatistics,
  InputDataByType,
  LoadModelOptions,
  ModelConfig,
  ModelMetadata,
  ModelState,
  ModelStatistics,
  ParameterValue,
  Parameters,
  RepositoryIndexEntry,
  RepositoryIndexOptions,
  RequestedOutput,
  ServerMetadata,
  SharedMemoryInput,
  SharedMemoryPlace,
  SharedMemoryRegionStatus,
  TensorData,
  TensorDataByType,
  TensorMetadata,
  UnloadModelOptions,
  VersionOptions,
} from './types.js';
