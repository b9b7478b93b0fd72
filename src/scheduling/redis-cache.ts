import { RESP_TYPES, createClient } from '@redis/client';
import { NereidError } from '../kernel/errors.js';
import { responseParametersOf, withResponseParameters } from '../kernel/response-parameters.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ResponseCacheStatistics } from '../metrics/response-cache-statistics.js';
import type { DataType } from '../protocol/data-type.js';
import type { ParameterValue, Parameters } from '../protocol/parameters.js';
import { type BytesElements, type FixedSizeArray, asBytes, deserializeBytes, serializeBytes, viewFixedSize } from '../protocol/tensor-data.js';
import { CacheCounters } from './cache-counters.js';
import type { InsertOutcome, ResponseCacheStore } from './response-cache.js';

/** `--cache-config redis,KEY=VALUE` settings, with the names of Triton's redis_cache. */
export interface RedisCacheOptions {
  readonly host: string;
  readonly port: number;
  readonly user?: string;
  readonly password?: string;
  readonly db?: number;
  /** 0: wait for ever (Triton's default). */
  readonly connectTimeoutMs?: number;
  /** 0: wait for ever (Triton's default). */
  readonly socketTimeoutMs?: number;
  /** Told when Redis cannot be reached after `connect`, once per outage (requests are answered without the cache meanwhile). */
  readonly onError: (message: string) => void;
}

/** Where and as whom to connect: RedisCacheOptions without `onError`. */
export type RedisConnectionOptions = Omit<RedisCacheOptions, 'onError'>;

/**
 * `user` and `password` from TRITONCACHE_REDIS_USERNAME and TRITONCACHE_REDIS_PASSWORD where the
 * `--cache-config` settings leave them out (Triton's redis_cache reads these variables; without a user
 * Redis takes "default").
 */
export function withEnvironmentCredentials(config: RedisConnectionOptions, env: NodeJS.ProcessEnv): RedisConnectionOptions {
  const user = config.user ?? env.TRITONCACHE_REDIS_USERNAME;
  const password = config.password ?? env.TRITONCACHE_REDIS_PASSWORD;
  return { ...config, ...(user !== undefined ? { user } : {}), ...(password !== undefined ? { password } : {}) };
}

/** The system's words for the socket errors a connection meets, as hiredis reports them (strerror, gai_strerror). */
const SOCKET_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by peer',
  ETIMEDOUT: 'Connection timed out',
  EHOSTUNREACH: 'No route to host',
  ENETUNREACH: 'Network is unreachable',
  ENOTFOUND: 'Name or service not known',
  EAI_AGAIN: 'Temporary failure in name resolution',
};

/**
 * Why Redis could not be used, in the words of Triton's redis client (redis-plus-plus over hiredis):
 * `failed to connect to Redis (localhost:0): Connection refused` for a socket error, Redis's own reply
 * (`WRONGPASS ...`, `NOAUTH Authentication required.`) when it refused the client.
 */
export function describeRedisFailure(error: unknown, address: string): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string') return message;
  return `failed to connect to Redis (${address}): ${SOCKET_ERRORS[code] ?? message}`;
}


interface StoredTensor {
  readonly name: string;
  readonly dataType: DataType;
  readonly shape: readonly number[];
  readonly byteLength: number;
}

/** A response parameter as JSON can hold it: its name, its type and its value as text (bigint included). */
type StoredParameter = readonly [name: string, type: 'string' | 'number' | 'bigint' | 'boolean', value: string];

const storeParameter = ([name, value]: [string, ParameterValue]): StoredParameter => [name, typeof value as StoredParameter[1], String(value)];

function readParameter([name, type, value]: StoredParameter): [string, ParameterValue] {
  switch (type) {
    case 'string':
      return [name, value];
    case 'number':
      return [name, Number(value)];
    case 'bigint':
      return [name, BigInt(value)];
    case 'boolean':
      return [name, value === 'true'];
  }
}

/**
 * One Redis value: a 4-byte length, a JSON header (the outputs and the response parameters the model
 * set), then each output's bytes (BYTES serialized). A header that is a bare list of outputs, as
 * earlier versions wrote, is read as a response without parameters.
 */
export function encodeEntry(outputs: readonly Tensor[]): Buffer {
  const data = outputs.map((output) =>
    output.dataType === 'BYTES' ? serializeBytes(output.data as BytesElements) : asBytes(output.data as FixedSizeArray),
  );
  const stored = outputs.map((output, index): StoredTensor => ({ name: output.name, dataType: output.dataType, shape: output.shape, byteLength: data[index]!.byteLength }));
  const header = Buffer.from(JSON.stringify({ outputs: stored, parameters: Object.entries(responseParametersOf(outputs)).map(storeParameter) }));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.byteLength);
  return Buffer.concat([length, header, ...data]);
}

/** The outputs of an entry encodeEntry wrote, or undefined when the value is not one (another program's key). */
export function decodeEntry(value: Buffer): readonly Tensor[] | undefined {
  try {
    const headerLength = value.readUInt32LE(0);
    const header = JSON.parse(value.toString('utf8', 4, 4 + headerLength)) as StoredTensor[] | { outputs: StoredTensor[]; parameters: StoredParameter[] };
    const [tensors, stored] = Array.isArray(header) ? [header, []] : [header.outputs, header.parameters];
    let offset = 4 + headerLength;
    const outputs = tensors.map((tensor): Tensor => {
      const bytes = value.subarray(offset, offset + tensor.byteLength);
      offset += tensor.byteLength;
      const data = tensor.dataType === 'BYTES' ? deserializeBytes(bytes) : viewFixedSize(tensor.dataType, bytes);
      if (typeof data === 'string') throw new Error(data);
      return { name: tensor.name, dataType: tensor.dataType, shape: tensor.shape, data };
    });
    const parameters: Parameters = Object.fromEntries(stored.map(readParameter));
    return offset === value.byteLength ? withResponseParameters(outputs, parameters) : undefined;
  } catch {
    return undefined;
  }
}

/** Redis keys of Nereid's responses start with this, so that they never meet another program's. */
const KEY_PREFIX = 'nereid:response:';

/**
 * Triton's `redis` cache (triton-inference-server/redis_cache): the responses live in a Redis server,
 * which may be shared by several Nereid servers and outlives them; Redis's own `maxmemory-policy`
 * evicts them. `connect` must succeed first, as Triton's cache pings Redis when it is created. When
 * Redis cannot be reached later, requests are served as without a cache: a lookup is a miss and an
 * insertion a counted failure, and `onError` is told (as Triton logs an error).
 * NOTE: commands are not queued while the connection is down (disableOfflineQueue), so a request never
 * waits for Redis to come back; the client reconnects by itself meanwhile. RESP2 and no handshake
 * extras (client info, maintenance notifications), so that the first command Redis refuses for want of
 * a password is the PING, answered `NOAUTH Authentication required.` as Triton's is.
 */
export class RedisCache implements ResponseCacheStore {
  readonly isShared = true;
  readonly #client;
  readonly #onError: (message: string) => void;
  readonly #address: string;
  /** Set by a failure, cleared once connected: only the first failure of an outage is reported. */
  #isFailing = false;
  readonly #counters = new CacheCounters();

  constructor(options: RedisCacheOptions) {
    this.#onError = options.onError;
    this.#address = `${options.host}:${options.port}`;
    this.#client = createClient({
      socket: {
        host: options.host,
        port: options.port,
        ...(options.connectTimeoutMs ? { connectTimeout: options.connectTimeoutMs } : {}),
        ...(options.socketTimeoutMs ? { socketTimeout: options.socketTimeoutMs } : {}),
      },
      ...(options.user !== undefined ? { username: options.user } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
      ...(options.db !== undefined ? { database: options.db } : {}),
      RESP: 2,
      disableClientInfo: true,
      maintNotifications: 'disabled',
      disableOfflineQueue: true,
    }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  }

  /**
   * Connects and pings Redis: resolves once it answers; rejects at the first failure with Triton's
   * reason (`Failed to initialize RedisCache: failed to connect to Redis (localhost:0): Connection
   * refused`), the client stopped, so that the server fails to start as Triton's does.
   */
  async connect(): Promise<void> {
    let failStartup: (error: unknown) => void = () => {};
    const onStartupError = (error: unknown): void => failStartup(error);
    this.#client.on('error', onStartupError);
    try {
      await new Promise<void>((resolve, reject) => {
        failStartup = reject;
        this.#client.connect().then(() => resolve(), reject);
      });
      await this.#client.ping();
    } catch (error) {
      if (this.#client.isOpen) this.#client.destroy();
      throw new NereidError('INTERNAL', `Failed to initialize RedisCache: ${describeRedisFailure(error, this.#address)}`);
    } finally {
      this.#client.off('error', onStartupError);
    }
    this.#client.on('error', (error: Error) => this.#fail(error));
    this.#client.on('ready', () => {
      this.#isFailing = false;
    });
  }

  #fail(error: unknown): void {
    if (this.#isFailing) return;
    this.#isFailing = true;
    this.#onError(
      `the redis cache at ${this.#address} cannot be reached (${describeRedisFailure(error, this.#address)}); requests are served without the cache until it can`,
    );
  }

  async lookup(key: string): Promise<readonly Tensor[] | undefined> {
    const startNs = this.#counters.startLookup();
    let outputs: readonly Tensor[] | undefined;
    try {
      const value = await this.#client.get(KEY_PREFIX + key);
      outputs = value === null ? undefined : decodeEntry(value as Buffer);
    } catch (error) {
      this.#fail(error);
    }
    this.#counters.endLookup(startNs, outputs !== undefined);
    return outputs;
  }

  async insert(key: string, outputs: readonly Tensor[]): Promise<InsertOutcome> {
    const startNs = this.#counters.startInsertion();
    try {
      const reply = await this.#client.set(KEY_PREFIX + key, encodeEntry(outputs), { condition: 'NX' });
      return reply === null ? 'present' : 'inserted';
    } catch (error) {
      this.#counters.countInsertionFailure();
      this.#fail(error);
      return 'failed';
    } finally {
      this.#counters.endInsertion(startNs);
    }
  }

  statistics(): ResponseCacheStatistics {
    return this.#counters.statistics();
  }

  /** Waits for the replies still due when connected; drops the connection attempts otherwise. */
  async close(): Promise<void> {
    if (this.#client.isReady) await this.#client.close();
    else if (this.#client.isOpen) this.#client.destroy();
  }
}
