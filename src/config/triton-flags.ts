/**
 * Triton's flags (server src/command_line_parser.cc) that Nereid does not implement, so that a Triton
 * command line starts Nereid unchanged: each tunes something Nereid does not have (a thread pool of
 * its HTTP library, GPU memory pools, shared-library folders), and the server starts and logs one
 * warning saying why. Every flag that asks for a behaviour is implemented; none is refused.
 */
export interface TritonOnlyFlag {
  /** The argument, as the help shows it. */
  readonly argument: string;
  /** Why Nereid ignores it. */
  readonly reason: string;
  readonly isRepeatable?: boolean;
}

const NO_GPU = 'Nereid runs on the CPU and has no GPU';
const NODE_THREADS = "Node.js serves every connection on its event loop; it has no pool of Triton's front-end threads to size";

export const TRITON_ONLY_FLAGS: Readonly<Record<string, TritonOnlyFlag>> = {
  'http-thread-count': { argument: 'N', reason: NODE_THREADS },
  'grpc-infer-allocation-pool-size': {
    argument: 'N',
    reason: 'grpc-js allocates a request and its response per call; there is no pool of them to keep',
  },
  'grpc-infer-response-compression-level': {
    argument: 'none|low|medium|high',
    reason: 'replies are compressed when the client asks for it (grpc-accept-encoding), at grpc-js level',
  },
  'grpc-http2-max-pings-without-data': {
    argument: 'N',
    reason: 'a gRPC server sends no pings of its own here; --grpc-keepalive-time and --grpc-http2-max-ping-strikes apply',
  },
  'grpc-max-connection-age': { argument: 'MS', reason: 'connections are not aged out; clients keep them until they close them' },
  'grpc-max-connection-age-grace': { argument: 'MS', reason: 'connections are not aged out (see --grpc-max-connection-age)' },
  'reuse-http-port': { argument: 'BOOL', reason: 'Node.js 20 cannot share a listening port between processes' },
  'reuse-grpc-port': { argument: 'BOOL', reason: 'Node.js 20 cannot share a listening port between processes' },
  'allow-gpu-metrics': { argument: 'BOOL', reason: `${NO_GPU}: no nv_gpu_* metrics are reported` },
  'pinned-memory-pool-byte-size': { argument: 'BYTES', reason: `${NO_GPU}: no pinned memory is needed to copy to one` },
  'cuda-memory-pool-byte-size': { argument: 'GPU:BYTES', reason: NO_GPU, isRepeatable: true },
  'cuda-virtual-address-size': { argument: 'GPU:BYTES', reason: NO_GPU, isRepeatable: true },
  'min-supported-compute-capability': { argument: 'X.Y', reason: NO_GPU },
  'model-load-gpu-limit': { argument: 'GPU:FRACTION', reason: NO_GPU, isRepeatable: true },
  'buffer-manager-thread-count': { argument: 'N', reason: 'tensors are not copied between devices; there is no buffer manager' },
  'host-policy': {
    argument: 'POLICY,KEY=VALUE',
    reason: 'instances are not pinned to NUMA nodes or cores (--backend-config onnxruntime,execution-thread-count sizes the ONNX Runtime threads)',
    isRepeatable: true,
  },
  'backend-directory': { argument: 'DIR', reason: 'the backends are built in; none is loaded from a shared library' },
  'repoagent-directory': { argument: 'DIR', reason: 'repository agents are not supported; none is loaded from a shared library' },
  'cache-directory': { argument: 'DIR', reason: 'caches are built in; none is loaded from a shared library' },
  'sagemaker-thread-count': { argument: 'N', reason: NODE_THREADS },
  'vertex-ai-thread-count': { argument: 'N', reason: NODE_THREADS },
};

/** The warnings for the ignored Triton flags given, one per flag. */
export function checkTritonOnlyFlags(values: Readonly<Record<string, string | string[] | boolean | undefined>>): string[] {
  const warnings: string[] = [];
  for (const [name, flag] of Object.entries(TRITON_ONLY_FLAGS)) {
    const value = values[name];
    if (value === undefined) continue;
    const given = (Array.isArray(value) ? value : [String(value)]).map(String);
    warnings.push(`--${name} ${given.join(' ')} is accepted for Triton's sake and has no effect: ${flag.reason}`);
  }
  return warnings;
}
