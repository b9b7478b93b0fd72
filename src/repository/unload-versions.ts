import type { CloseOptions } from '../scheduling/scheduler.js';
import { removeOverrideFolder } from './load-override.js';
import type { ModelEntry } from './model-lifecycle.js';

/**
 * Unloads an entry's loaded versions: they turn UNLOADING, finish what they accepted, then stop and
 * are listed UNAVAILABLE with `reason`; a model made from a load request's files loses its private folder too.
 */
export async function unloadVersions(entry: ModelEntry, options?: CloseOptions, reason = 'unloaded'): Promise<void> {
  await Promise.all(
    [...entry.versions.values()].map(async (state) => {
      const model = state.model;
      if (model === undefined) return;
      state.state = 'UNLOADING';
      await model.unload(options);
      state.state = 'UNAVAILABLE';
      state.reason = reason;
      delete state.model;
      delete state.memoryBytes;
    }),
  );
  await removeOverrideFolder(entry.modelDir);
}
