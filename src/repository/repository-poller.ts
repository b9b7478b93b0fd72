import type { Logger } from '../logging/logger.js';
import type { Clock } from '../scheduling/clock.js';

export interface RepositoryPollerOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The model folders now, by model name; throws when a repository cannot be read. */
  scan(): Promise<ReadonlyMap<string, readonly string[]>>;
  /** What a model's folders look like; equal strings mean nothing changed. */
  fingerprint(dirs: readonly string[]): Promise<string>;
  /**
   * Loads or reloads a model whose folders are new or changed; throws when the load fails. Called for
   * every changed model at once. Resolves with 'listed' when the model was only listed, not loaded
   * (`--load-on-demand`: it loads when a request asks for it).
   */
  reload(name: string, dirs: readonly string[]): Promise<'loaded' | 'listed'>;
  /** Unloads a model whose folders are gone. */
  remove(name: string): Promise<void>;
  /** After a poll that loaded, reloaded or unloaded models (never throws): `--model-namespacing` re-links the ensembles. */
  afterChanges?(): Promise<void>;
}

/**
 * POLL mode (`--model-control-mode=poll`): every interval, models whose folders changed (config,
 * labels, version folders or files) are reloaded, new ones loaded and removed ones unloaded.
 *
 *     start ──interval──▶ poll ──interval──▶ poll ...    a poll still running at the next tick: that tick is skipped
 *
 * A model caught half-written fails to load and keeps its old versions serving (reload's contract); its
 * fingerprint is recorded all the same, so it is read again at the first poll that finds its folder
 * changed, which finishing the write does, and not at every poll in between.
 */
export class RepositoryPoller {
  readonly #options: RepositoryPollerOptions;
  /** What each known model's folders looked like when it was last read. */
  readonly #fingerprints = new Map<string, string>();
  #timer: unknown;
  #isPolling = false;

  constructor(options: RepositoryPollerOptions) {
    this.#options = options;
  }

  /** Records what a model's folders looked like when it was loaded at start-up. */
  remember(name: string, fingerprint: string): void {
    this.#fingerprints.set(name, fingerprint);
  }

  /** Polls every `intervalMs` until stop(). */
  start(intervalMs: number): void {
    const { clock } = this.#options;
    const tick = (): void => {
      this.#timer = clock.setTimer(tick, intervalMs * 1000);
      if (this.#isPolling) return;
      this.#isPolling = true;
      void this.poll().finally(() => (this.#isPolling = false));
    };
    this.#timer = clock.setTimer(tick, intervalMs * 1000);
  }

  stop(): void {
    if (this.#timer !== undefined) this.#options.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /** One pass over the repositories; never throws (failures are logged). */
  async poll(): Promise<void> {
    const { logger, scan, fingerprint, reload, remove } = this.#options;
    const found = await scan().catch((error: Error) => {
      logger.error('repository', `poll: ${error.message}`);
      return undefined;
    });
    if (found === undefined) return;
    const changed: Array<[string, readonly string[]]> = [];
    for (const [name, dirs] of found) {
      const print = await fingerprint(dirs);
      if (this.#fingerprints.get(name) === print) continue;
      // Recorded whether or not the load works: a broken model is tried again once its folder changes.
      this.#fingerprints.set(name, print);
      changed.push([name, dirs]);
    }
    // The changed models reload together: the repository runs `--model-load-thread-count` at a time.
    await Promise.all(
      changed.map(async ([name, dirs]) => {
        try {
          const outcome = await reload(name, dirs);
          logger.info('repository', outcome === 'loaded' ? `poll: loaded '${name}' after a change in its folder` : `poll: listed '${name}' after a change in its folder; it loads when a request asks for it`);
        } catch (error) {
          logger.error('repository', `poll: ${(error as Error).message}; the folder is read again when it changes`);
        }
      }),
    );
    const removed = [...this.#fingerprints.keys()].filter((name) => !found.has(name));
    for (const name of removed) {
      this.#fingerprints.delete(name);
      await remove(name);
      logger.info('repository', `poll: unloaded '${name}', whose folder is gone`);
    }
    if (changed.length + removed.length > 0) await this.#options.afterChanges?.();
  }
}
