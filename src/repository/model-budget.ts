import { NereidError } from '../kernel/errors.js';

/**
 * Why a model is loaded: at start-up (mode NONE, or `--load-model`), by the repository API, by POLL
 * mode, or by a request (`--load-on-demand`). Only models loaded on demand are ever evicted: the
 * others are what the operator asked for.
 */
export type LoadOrigin = 'startup' | 'api' | 'poll' | 'on_demand';

export interface BudgetLimits {
  /** `--max-loaded-models`; undefined: no limit. */
  readonly maxLoadedModels?: number;
  /** `--model-memory-budget`, in bytes; undefined: no limit. */
  readonly memoryBudgetBytes?: number;
}

export interface ReserveRequest {
  readonly name: string;
  /** The estimated memory of the versions about to load (see memory-estimate.ts). */
  readonly bytes: number;
  readonly origin: LoadOrigin;
  /** Whether a loaded model may be unloaded now: no request queued or running, nothing else under way for it. */
  readonly isIdle: (name: string) => boolean;
}

/** Room held for one load until it ends: `commit` once it is loaded, `cancel` when it fails. */
export interface Reservation {
  /** The models to unload first, least recently used first: they are no longer counted. */
  readonly victims: readonly string[];
  /** The limit the load would have passed without the victims; undefined when there are none. */
  readonly limit: 'count' | 'bytes' | undefined;
  /** The load succeeded: the model counts as loaded, and can be picked as a victim from now on. */
  commit(): void;
  /** The load failed: what was counted for the model before (a reload's old versions) is counted again. */
  cancel(): void;
}

interface Tracked {
  readonly bytes: number;
  readonly origin: LoadOrigin;
  readonly isLoading: boolean;
  /** The models its load needed (an ensemble's steps), which are unloaded only after it. */
  readonly dependencies: Set<string>;
}

/** How a limit reads in a reason: `--max-loaded-models 20`, `--model-memory-budget 512MB`. */
export function describeLimit(limit: 'count' | 'bytes', limits: BudgetLimits): string {
  return limit === 'count' ? `--max-loaded-models ${limits.maxLoadedModels}` : `--model-memory-budget ${formatBytes(limits.memoryBudgetBytes ?? 0)}`;
}

function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GB', 2 ** 30], ['MB', 2 ** 20], ['KB', 2 ** 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)}MB` : `${bytes} bytes`;
}

/**
 * The loaded models counted against `--max-loaded-models` and `--model-memory-budget`, in the order
 * they were last used, and the choice of which to unload when a load needs room.
 *
 *     least recently used ──▶ [m7, m3, m12, ..., m5] ◀── touch(m) moves m here
 *
 * Before a load, `reserve` counts the model in (a reload counts once, with its new size) and, while a
 * limit would be passed, picks victims from the front: loaded on demand, idle, not loading, and needed
 * by no model that stays (an ensemble's steps go only with the ensemble, or once it has gone). The
 * victims stop counting at once, so parallel loads never pick the same victim nor overshoot together.
 * When no victim is left and a limit would still be passed, the load is refused (UNAVAILABLE); the
 * message is the reason, which the repository puts after Triton's `load failed for model '<m>': `.
 */
export class ModelBudget {
  readonly #limits: BudgetLimits;
  /** Every loaded or loading model; Map order is use order, least recent first. */
  readonly #models = new Map<string, Tracked>();

  constructor(limits: BudgetLimits) {
    this.#limits = limits;
  }

  get limits(): BudgetLimits {
    return this.#limits;
  }

  /** A request used the model: it becomes the most recently used. */
  touch(name: string): void {
    const tracked = this.#models.get(name);
    if (tracked === undefined) return;
    this.#models.delete(name);
    this.#models.set(name, tracked);
  }

  /** Models loaded or loading. */
  get count(): number {
    return this.#models.size;
  }

  /** The estimated memory of every model loaded or loading. */
  get bytes(): number {
    let total = 0;
    for (const tracked of this.#models.values()) total += tracked.bytes;
    return total;
  }

  originOf(name: string): LoadOrigin | undefined {
    return this.#models.get(name)?.origin;
  }

  /** `name`'s load needs `dependency` (an ensemble step's model): it stays while `name` is loaded. */
  addDependency(name: string, dependency: string): void {
    this.#models.get(name)?.dependencies.add(dependency);
  }

  /** The models `name`'s load needed (an ensemble's steps' models), as addDependency recorded them. */
  dependenciesOf(name: string): readonly string[] {
    return [...(this.#models.get(name)?.dependencies ?? [])];
  }

  /** Whether a model loaded or loading other than those in `except` needs `name` (runs it in an ensemble step). */
  isNeeded(name: string, except: readonly string[] = []): boolean {
    return [...this.#models].some(([other, tracked]) => other !== name && !except.includes(other) && tracked.dependencies.has(name));
  }

  /** The model was unloaded or removed by something other than an eviction: it counts no more. */
  forget(name: string): void {
    this.#models.delete(name);
  }

  /**
   * Counts a model about to load and picks the models to unload to stay within the limits; throws
   * UNAVAILABLE, counting nothing, when the limits cannot be kept.
   */
  reserve({ name, bytes, origin, isIdle }: ReserveRequest): Reservation {
    const { maxLoadedModels, memoryBudgetBytes } = this.#limits;
    const previous = this.#models.get(name);
    if (memoryBudgetBytes !== undefined && bytes > memoryBudgetBytes) {
      throw new NereidError(
        'UNAVAILABLE',
        `its estimated memory (${formatBytes(bytes)}) is more than the whole ${describeLimit('bytes', this.#limits)}`,
      );
    }
    const victims: string[] = [];
    let firstLimit: 'count' | 'bytes' | undefined;
    let count = this.#models.size + (previous === undefined ? 1 : 0);
    let total = this.bytes - (previous?.bytes ?? 0) + bytes;
    const overLimit = (): 'count' | 'bytes' | undefined =>
      maxLoadedModels !== undefined && count > maxLoadedModels ? 'count' : memoryBudgetBytes !== undefined && total > memoryBudgetBytes ? 'bytes' : undefined;
    for (let limit = overLimit(); limit !== undefined; limit = overLimit()) {
      firstLimit ??= limit;
      const victim = this.#pickVictim(name, victims, isIdle);
      if (victim === undefined) {
        throw new NereidError(
          'UNAVAILABLE',
          `loading it would pass ${describeLimit(limit, this.#limits)} (${this.#usage()}) and no loaded model can be unloaded to make room: ` +
            'models loaded at start-up, by --load-model or by the repository API are kept, and so are models with requests queued or running and the models a loaded ensemble runs',
        );
      }
      victims.push(victim);
      count--;
      total -= this.#models.get(victim)!.bytes;
    }
    for (const victim of victims) this.#models.delete(victim);
    // A reload keeps its origin unless the operator now asks for the model (an API load).
    const kept = previous?.origin === 'on_demand' && origin === 'poll' ? 'on_demand' : origin;
    this.#models.delete(name);
    this.#models.set(name, { bytes, origin: kept, isLoading: true, dependencies: new Set(previous?.dependencies) });
    let isSettled = false;
    return {
      victims,
      limit: firstLimit,
      commit: () => {
        if (isSettled) return;
        isSettled = true;
        const tracked = this.#models.get(name);
        if (tracked !== undefined) this.#models.set(name, { ...tracked, isLoading: false });
      },
      cancel: () => {
        if (isSettled) return;
        isSettled = true;
        if (previous === undefined) this.#models.delete(name);
        else this.#models.set(name, previous);
      },
    };
  }

  #pickVictim(loading: string, victims: readonly string[], isIdle: (name: string) => boolean): string | undefined {
    for (const [name, tracked] of this.#models) {
      if (name === loading || victims.includes(name) || tracked.origin !== 'on_demand' || tracked.isLoading) continue;
      if (this.isNeeded(name, victims) || !isIdle(name)) continue;
      return name;
    }
    return undefined;
  }

  #usage(): string {
    const { maxLoadedModels, memoryBudgetBytes } = this.#limits;
    const parts = [
      ...(maxLoadedModels !== undefined ? [`${this.#models.size} models loaded or loading`] : []),
      ...(memoryBudgetBytes !== undefined ? [`${formatBytes(this.bytes)} estimated in use`] : []),
    ];
    return parts.join(', ');
  }
}
