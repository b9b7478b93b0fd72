import { NereidError } from '../kernel/errors.js';
import { deferred } from '../util/deferred.js';

/** One entry of an instance group's `rate_limiter { resources [...] }`. */
export interface ResourceRequirement {
  readonly name: string;
  readonly count: number;
  /** `global: true`: one pool for the whole server instead of one per device. */
  readonly isGlobal: boolean;
}

/** `--rate-limit-resource NAME:COUNT[:DEVICE]`: how many of a resource the server has. */
export interface DeclaredResource {
  readonly name: string;
  readonly count: number;
  /** The device the count applies to; undefined: every device (and global resources of that name). */
  readonly device?: number;
}

/** What one instance asks of the rate limiter. */
export interface InstanceRateLimit {
  readonly resources: readonly ResourceRequirement[];
  /** The instance group's `priority`; 0 counts as 1, as in Triton. */
  readonly priority: number;
  /** The device the instance runs on, for its per-device resources (every Nereid instance: CPU, device 0). */
  readonly deviceId: number;
}

export interface RateLimiterOptions {
  readonly declared: readonly DeclaredResource[];
  /**
   * Runs the allocation that follows a release; the default waits one turn of the event loop. NOTE: the
   * wait lets the instance that released re-stage first, if it has more work, so that it competes by
   * priority as Triton's OnRelease does (it stages the instance again before AttemptAllocation);
   * allocating at once would hand the resources to whoever waited, alternating whatever the priorities.
   */
  readonly defer?: (callback: () => void) => void;
}

/**
 * One entry per name and device: the smallest count where a resource is declared twice for the same
 * device (or twice for every device), as Triton's TritonServerOptions::AddRateLimiterResource keeps it.
 */
function smallestOfEach(declared: readonly DeclaredResource[]): DeclaredResource[] {
  const byKey = new Map<string, DeclaredResource>();
  for (const entry of declared) {
    const key = JSON.stringify([entry.name, entry.device ?? null]);
    const kept = byKey.get(key);
    if (kept === undefined || entry.count < kept.count) byKey.set(key, entry);
  }
  return [...byKey.values()];
}

type Pools = Map<string, Map<string, number>>;
const GLOBAL = 'global';
const deviceKey = (deviceId: number): string => `device ${deviceId}`;

/** An instance known to the rate limiter: it asks for its resources before each execution. */
export interface RateLimiterRegistration {
  /** Resolves once the instance's resources are allocated to it; rejects once it is unregistered. */
  acquire(): Promise<void>;
  /** Gives the resources back after the execution (and counts the execution). */
  release(): void;
  /** Gives the resources back unused (what they were for went away meanwhile): no execution counted. */
  giveBack(): void;
  /** Forgets the instance (its model unloads); a pending `acquire` rejects with UNAVAILABLE. */
  unregister(): void;
}

interface Registered {
  readonly label: string;
  readonly limit: InstanceRateLimit;
  /** Its resources by pool (GLOBAL or a device) and name. */
  readonly needs: Pools;
  executionCount: number;
}

interface Staged {
  readonly instance: Registered;
  readonly sequence: number;
  readonly grant: () => void;
  readonly refuse: (error: NereidError) => void;
}

const addTo = (pools: Pools, pool: string, name: string, count: number, combine: (a: number, b: number) => number): void => {
  let names = pools.get(pool);
  if (names === undefined) pools.set(pool, (names = new Map()));
  names.set(name, combine(names.get(name) ?? 0, count));
};

/**
 * Triton's rate limiter with `--rate-limit=execution_count` (core src/rate_limiter.cc,
 * docs/user_guide/rate_limiter.md): an instance executes only once the resources its group names are
 * allocated to it, and gives them back when the execution ends.
 * - Resources: per device unless `global`. A resource has, by default, the largest count any loaded
 *   instance asks for; `--rate-limit-resource` sets it instead, and then a resource it does not name
 *   has none. An instance that asks for more than there is fails its model's load with Triton's
 *   message, as does a name used both as global and per device.
 * - Order: instances waiting for their resources ("staged") are served by their scaled priority,
 *   executions so far × priority (lowest first; priority 2 gets half the turns of priority 1), ties in
 *   the order they asked. Only the first in that order is tried: when its resources are taken, the
 *   others wait too, so a large request is not starved by small ones.
 */
export class RateLimiter {
  readonly #declared: readonly DeclaredResource[];
  readonly #defer: (callback: () => void) => void;
  readonly #instances = new Set<Registered>();
  #max: Pools = new Map();
  readonly #allocated: Pools = new Map();
  #staged: Staged[] = [];
  #nextSequence = 0;

  constructor(options: RateLimiterOptions) {
    this.#declared = smallestOfEach(options.declared);
    this.#defer = options.defer ?? ((callback) => setImmediate(callback));
  }

  /**
   * Registers the instances of one model version (labels name them in errors). Throws INVALID_ARG,
   * registering none, when the resources they ask for cannot be had.
   */
  register(instances: ReadonlyArray<{ readonly label: string; readonly limit: InstanceRateLimit }>): RateLimiterRegistration[] {
    const added = instances.map(({ label, limit }): Registered => {
      const needs: Pools = new Map();
      for (const resource of limit.resources) {
        addTo(needs, resource.isGlobal ? GLOBAL : deviceKey(limit.deviceId), resource.name, resource.count, (a, b) => a + b);
      }
      return { label, limit, needs, executionCount: 0 };
    });
    for (const instance of added) this.#instances.add(instance);
    try {
      this.#max = this.#resourceLimits();
    } catch (error) {
      for (const instance of added) this.#instances.delete(instance);
      throw error;
    }
    return added.map((instance) => this.#registration(instance));
  }

  /** How many of each resource there is now, by pool (`global`, `device 0`...) and name. */
  limits(): Record<string, Record<string, number>> {
    return Object.fromEntries([...this.#max].map(([pool, names]) => [pool, Object.fromEntries(names)]));
  }

  #registration(instance: Registered): RateLimiterRegistration {
    return {
      acquire: () => {
        if (!this.#instances.has(instance)) return Promise.reject(this.#unregisteredError(instance));
        const waiter = deferred();
        this.#staged.push({ instance, sequence: this.#nextSequence++, grant: waiter.resolve, refuse: waiter.reject });
        this.#allocate();
        return waiter.promise;
      },
      release: () => {
        instance.executionCount++;
        this.#free(instance);
      },
      giveBack: () => this.#free(instance),
      unregister: () => {
        if (!this.#instances.delete(instance)) return;
        const refused = this.#staged.filter((staged) => staged.instance === instance);
        this.#staged = this.#staged.filter((staged) => staged.instance !== instance);
        for (const staged of refused) staged.refuse(this.#unregisteredError(instance));
        // Fewer instances never need more resources, so this cannot fail.
        this.#max = this.#resourceLimits();
        this.#allocate();
      },
    };
  }

  #free(instance: Registered): void {
    for (const [pool, names] of instance.needs) for (const [name, count] of names) addTo(this.#allocated, pool, name, -count, (a, b) => a + b);
    this.#defer(() => this.#allocate());
  }

  /** Allocates to the first staged instance in priority order while its resources are free (Triton's AttemptAllocation). */
  #allocate(): void {
    for (;;) {
      let first: Staged | undefined;
      for (const staged of this.#staged) {
        if (first === undefined || this.#isBefore(staged, first)) first = staged;
      }
      if (first === undefined || !this.#isFree(first.instance)) return;
      for (const [pool, names] of first.instance.needs) for (const [name, count] of names) addTo(this.#allocated, pool, name, count, (a, b) => a + b);
      this.#staged.splice(this.#staged.indexOf(first), 1);
      first.grant();
    }
  }

  #isBefore(a: Staged, b: Staged): boolean {
    const scaled = (staged: Staged): number => staged.instance.executionCount * Math.max(1, staged.instance.limit.priority);
    return scaled(a) !== scaled(b) ? scaled(a) < scaled(b) : a.sequence < b.sequence;
  }

  #isFree(instance: Registered): boolean {
    for (const [pool, names] of instance.needs) {
      for (const [name, count] of names) {
        if ((this.#allocated.get(pool)?.get(name) ?? 0) + count > (this.#max.get(pool)?.get(name) ?? 0)) return false;
      }
    }
    return true;
  }

  /** Triton's UpdateResourceLimits: the largest count each instance asks for, or the declared count. */
  #resourceLimits(): Pools {
    const max: Pools = new Map();
    for (const instance of this.#instances) {
      for (const [pool, names] of instance.needs) for (const [name, count] of names) addTo(max, pool, name, count, Math.max);
    }
    if (this.#declared.length > 0) {
      for (const [pool, names] of max) {
        for (const [name, needed] of names) {
          const available = this.#declaredCount(pool, name);
          if (available < needed) {
            throw new NereidError(
              'INVALID_ARG',
              `Resource count for "${name}" is limited to ${available} which will prevent scheduling of one or more model instances, the minimum required count is ${needed}`,
            );
          }
          names.set(name, available);
        }
      }
    }
    for (const name of max.get(GLOBAL)?.keys() ?? []) {
      for (const [pool, names] of max) {
        if (pool !== GLOBAL && names.has(name)) {
          throw new NereidError('INVALID_ARG', `Resource "${name}" is present as both global and device-specific resource in the model configuration.`);
        }
      }
    }
    return max;
  }

  /** A global resource takes the largest count declared for its name on any device; a device's, its own or the every-device one. */
  #declaredCount(pool: string, name: string): number {
    let count = 0;
    for (const declared of this.#declared) {
      if (declared.name !== name) continue;
      if (pool === GLOBAL || declared.device === undefined || deviceKey(declared.device) === pool) count = Math.max(count, declared.count);
    }
    return count;
  }

  #unregisteredError(instance: Registered): NereidError {
    return new NereidError('UNAVAILABLE', `instance '${instance.label}' was unloaded before the rate limiter gave it its resources`);
  }
}
