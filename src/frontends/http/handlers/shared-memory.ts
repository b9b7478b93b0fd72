import { NereidError } from '../../../core/index.js';
import type { JsonValue } from '../../../protocol/json-body.js';
import type { ByteCount, SharedMemoryRegistry } from '../../shared-memory/shared-memory-registry.js';
import { parseRequestJson } from '../request-json.js';
import { type Reply, jsonReply } from '../reply.js';
import { NON_STRING, NON_UNSIGNED, jsonUnsigned } from '../../triton-json.js';

type Action = 'status' | 'register' | 'unregister';

/** Triton answers a successful register or unregister with 200, a JSON content type and no body. */
const OK: Reply = { status: 200, headers: { 'content-type': 'application/json' }, chunks: [] };

/** TritonJson's AsUInt: a JSON unsigned integer up to 2^64 - 1 (a bigint past 2^53), or its error text. */
function asUnsigned(value: JsonValue): ByteCount {
  const unsigned = jsonUnsigned(value);
  if (unsigned === undefined) throw new NereidError('INVALID_ARG', NON_UNSIGNED);
  return unsigned;
}

/**
 * `/v2/systemsharedmemory[/region/{r}]/status|register|unregister`, after Triton's
 * HTTPAPIServer::HandleSystemSharedMemory (src/http_server.cc): its field checks and messages; the
 * registry's for the rest.
 */
export function handleSystemSharedMemory(registry: SharedMemoryRegistry, route: { readonly action: Action; readonly regionName: string | undefined }, body: Buffer): Reply {
  const { regionName } = route;
  switch (route.action) {
    case 'status':
      return jsonReply(registry.status(regionName).map(({ name, key, offset, byteSize }) => ({ name, key, offset, byte_size: byteSize })));
    case 'unregister':
      if (regionName === undefined) registry.unregisterAll();
      else registry.unregister(regionName);
      return OK;
    case 'register': {
      if (regionName === undefined) throw new NereidError('INVALID_ARG', "'region name' is necessary to register system shared memory region");
      const json = parseRequestJson(body.toString('utf8'), 'shared memory register request');
      const request = typeof json === 'object' && json !== null && !Array.isArray(json) ? json : {};
      const key = request.key;
      if (key === undefined) throw new NereidError('INVALID_ARG', "Shared memory register request has no 'key' field");
      if (typeof key !== 'string') throw new NereidError('INVALID_ARG', NON_STRING);
      const offset = request.offset === undefined ? 0 : asUnsigned(request.offset);
      if (request.byte_size === undefined) throw new NereidError('INVALID_ARG', "Shared memory register request has no 'byte_size' field");
      registry.register(regionName, key, offset, asUnsigned(request.byte_size));
      return OK;
    }
  }
}

/**
 * `/v2/cudasharedmemory[/region/{r}]/status|register|unregister` as a Triton built without GPU support
 * answers them (TRITON_ENABLE_GPU off in src/http_server.cc and src/shared_memory_manager.cc): no region
 * is ever listed, registering fails (its body read and parsed first), unregistering has nothing to do.
 */
export function handleCudaSharedMemory(route: { readonly action: Action; readonly regionName: string | undefined }, body: Buffer): Reply {
  const { regionName } = route;
  switch (route.action) {
    case 'status':
      if (regionName !== undefined) throw new NereidError('NOT_FOUND', `Unable to find cuda shared memory region: '${regionName}'`);
      return jsonReply([]);
    case 'unregister':
      return OK;
    case 'register':
      if (regionName === undefined) throw new NereidError('INVALID_ARG', "'region name' is necessary to register cuda shared memory region");
      // The request is read as Triton reads it before anything else: a body that is not JSON says so.
      parseRequestJson(body.toString('utf8'), 'shared memory register request');
      throw new NereidError('INVALID_ARG', `failed to register CUDA shared memory region: '${regionName}', GPUs not supported`);
  }
}
