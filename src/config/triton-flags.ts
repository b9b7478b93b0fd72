import { NereidError } from '../kernel/errors.js';

/**
 * Triton's flags (server src/command_line_parser.cc) that Nereid does not implement, and what it does
 * with each, so that a Triton command line starts Nereid unchanged wherever that is honest:
 *
 * - `ignored`: the flag tunes something Nereid does not have (a thread pool of its HTTP library, GPU
 *   memory pools, shared-library folders); the server starts and logs one warning saying why.
 * - `refused`: the flag asks for a behaviour Nereid does not have (header forwarding, namespacing,
 *   SageMaker); starting as if it were there would serve other answers than the user expects, so the
 *   flag is refused, unless it is given Triton's default, which asks for nothing.
 */
export interface TritonOnlyFlag {
  readonly disposition: 'ignored' | 'refused';
  /** The argument, as the help shows it. */
  readonly argument: string;
  /** Why Nereid ignores or refuses it. */
  readonly reason: string;
  /** Triton's default, given as the value: accepted without a word (refused flags only). */
  readonly defaultValue?: string;
  readonly isRepeatable?: boolean;
}

const NO_GPU = 'Nereid runs on the CPU and has no GPU';
const NODE_THREADS = "Node.js serves every connection on its event loop; it has no pool of Triton's front-end threads to size";

export const TRITON_ONLY_FLAGS: Readonly<Record<string, TritonOnlyFlag>> = {
  'http-thread-count': { disposition: 'ignored', argument: 'N', reason: NODE_THREADS },
  'grpc-infer-allocation-pool-size': {
    disposition: 'ignored',
    argument: 'N',
    reason: 'grpc-js allocates a request and its response per call; there is no pool of them to keep',
  },
  'grpc-infer-response-compression-level': {
    disposition: 'ignored',
    argument: 'none|low|medium|high',
    reason: 'replies are compressed when the client asks for it (grpc-accept-encoding), at grpc-js level',
  },
  'grpc-http2-max-pings-without-data': {
    disposition: 'ignored',
    argument: 'N',
    reason: 'a gRPC server sends no pings of its own here; --grpc-keepalive-time and --grpc-http2-max-ping-strikes apply',
  },
  'grpc-max-connection-age': { disposition: 'ignored', argument: 'MS', reason: 'connections are not aged out; clients keep them until they close them' },
  'grpc-max-connection-age-grace': { disposition: 'ignored', argument: 'MS', reason: 'connections are not aged out (see --grpc-max-connection-age)' },
  'reuse-http-port': { disposition: 'ignored', argument: 'BOOL', reason: 'Node.js 20 cannot share a listening port between processes' },
  'reuse-grpc-port': { disposition: 'ignored', argument: 'BOOL', reason: 'Node.js 20 cannot share a listening port between processes' },
  'allow-gpu-metrics': { disposition: 'ignored', argument: 'BOOL', reason: `${NO_GPU}: no nv_gpu_* metrics are reported` },
  'pinned-memory-pool-byte-size': { disposition: 'ignored', argument: 'BYTES', reason: `${NO_GPU}: no pinned memory is needed to copy to one` },
  'cuda-memory-pool-byte-size': { disposition: 'ignored', argument: 'GPU:BYTES', reason: NO_GPU, isRepeatable: true },
  'cuda-virtual-address-size': { disposition: 'ignored', argument: 'GPU:BYTES', reason: NO_GPU, isRepeatable: true },
  'min-supported-compute-capability': { disposition: 'ignored', argument: 'X.Y', reason: NO_GPU },
  'model-load-gpu-limit': { disposition: 'ignored', argument: 'GPU:FRACTION', reason: NO_GPU, isRepeatable: true },
  'buffer-manager-thread-count': { disposition: 'ignored', argument: 'N', reason: 'tensors are not copied between devices; there is no buffer manager' },
  'host-policy': {
    disposition: 'ignored',
    argument: 'POLICY,KEY=VALUE',
    reason: 'instances are not pinned to NUMA nodes or cores (--backend-config onnxruntime,execution-thread-count sizes the ONNX Runtime threads)',
    isRepeatable: true,
  },
  'backend-directory': { disposition: 'ignored', argument: 'DIR', reason: 'the backends are built in; none is loaded from a shared library' },
  'repoagent-directory': { disposition: 'ignored', argument: 'DIR', reason: 'repository agents are not supported; none is loaded from a shared library' },
  'cache-directory': { disposition: 'ignored', argument: 'DIR', reason: 'caches are built in; none is loaded from a shared library' },
  'model-namespacing': {
    disposition: 'refused',
    argument: 'BOOL',
    reason: 'model names are unique across the repositories; namespaces are not implemented',
    defaultValue: 'false',
  },
  'sagemaker-thread-count': { disposition: 'ignored', argument: 'N', reason: NODE_THREADS },
  'vertex-ai-thread-count': { disposition: 'ignored', argument: 'N', reason: NODE_THREADS },
};

const isDefault = (flag: TritonOnlyFlag, values: readonly string[]): boolean =>
  flag.defaultValue !== undefined && values.every((value) => value.toLowerCase() === flag.defaultValue);

/**
 * The warnings for the ignored Triton flags given, one per flag; throws `fail(message)` for a refused
 * flag given anything but Triton's default.
 */
export function checkTritonOnlyFlags(
  values: Readonly<Record<string, string | string[] | boolean | undefined>>,
  fail: (message: string) => NereidError,
): string[] {
  const warnings: string[] = [];
  for (const [name, flag] of Object.entries(TRITON_ONLY_FLAGS)) {
    const value = values[name];
    if (value === undefined) continue;
    const given = (Array.isArray(value) ? value : [String(value)]).map(String);
    if (flag.disposition === 'ignored') {
      warnings.push(`--${name} ${given.join(' ')} is accepted for Triton's sake and has no effect: ${flag.reason}`);
    } else if (!isDefault(flag, given)) {
      throw fail(`--${name} is one of Triton's flags that Nereid refuses: ${flag.reason}`);
    }
  }
  return warnings;
}
