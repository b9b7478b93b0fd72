import type { Logger } from '../logging/logger.js';
import type { CloseOptions } from '../scheduling/scheduler.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { type LoadOrigin, type ModelBudget, type Reservation, describeLimit } from './model-budget.js';
import type { ModelLeases } from './model-leases.js';
import type { ModelEntry } from './model-lifecycle.js';
import type { ModelLookup } from './model-lookup.js';
import { unloadVersions } from './unload-versions.js';

export interface ModelEvictorOptions {
  readonly budget: ModelBudget;
  readonly models: ModelLookup;
  /** The repository's per-model mutex: an eviction runs as one of the model's tasks. */
  readonly mutex: KeyedMutex;
  readonly leases: ModelLeases;
  readonly drainOptions: () => CloseOptions;
  readonly logger: Logger;
  readonly events?: { onModelEvicted(model: ModelEntry): void };
}

/** True when no version of the model has a request queued or running. */
function isIdleEntry(entry: ModelEntry | undefined): boolean {
  return entry !== undefined && [...entry.versions.values()].every((state) => (state.model?.inflightCount ?? 0) === 0);
}

/**
 * Makes room for a load: asks the budget for the victims and unloads them. A model is idle for the
 * budget when nothing else is under way for it (its mutex), no request is about to use it (a lease)
 * and none is queued or running.
 */
export class ModelEvictor {
  readonly #options: ModelEvictorOptions;

  constructor(options: ModelEvictorOptions) {
    this.#options = options;
  }

  /**
   * Counts a model about to load against the limits and unloads the models the budget picks to make
   * room, waiting until they are gone; throws the budget's refusal. The victims stop taking requests at
   * once (their versions turn UNLOADING in the same tick as the choice), so they finish only what they
   * had accepted: nothing, as only idle models are picked. A request for a victim waits for the
   * eviction (the mutex), then loads it again.
   */
  async makeRoom(name: string, bytes: number, origin: LoadOrigin): Promise<Reservation> {
    const { budget, models, mutex, leases, logger, events } = this.#options;
    const reservation = budget.reserve({
      name,
      bytes,
      origin,
      isIdle: (candidate) => mutex.isIdle(candidate) && !leases.has(candidate) && isIdleEntry(models.get(candidate)),
    });
    const reason = `unloaded to stay within ${describeLimit(reservation.limit ?? 'count', budget.limits)} (least recently used)`;
    for (const victim of reservation.victims) {
      const entry = models.get(victim);
      if (entry === undefined) continue;
      entry.isUnloaded = true;
      for (const state of entry.versions.values()) {
        if (state.model !== undefined) state.state = 'UNLOADING';
      }
    }
    await Promise.all(
      reservation.victims.map((victim) =>
        mutex.run(victim, async () => {
          const entry = models.get(victim);
          if (entry === undefined) return;
          await unloadVersions(entry, this.#options.drainOptions(), reason);
          logger.info('repository', `unloaded '${victim}' to load '${name}': ${reason}`);
          events?.onModelEvicted(entry);
        }),
      ),
    );
    return reservation;
  }
}
