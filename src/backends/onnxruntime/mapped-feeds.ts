import { holdMapping, releaseMapping } from '../../util/mapped-memory.js';
import type { ChannelTensor } from './ort-channel.js';

/** A run's feeds with the mappings they point into held, until `release`. */
export interface MappedFeeds {
  readonly feeds: readonly ChannelTensor[];
  /** Lets go of the mappings: call once, when the execution thread is done with the run (or gone). */
  release(): void;
}

const NOTHING_HELD: Omit<MappedFeeds, 'feeds'> = { release: () => {} };

/**
 * `feeds` where each fixed-size input whose every part lies in a mapped shared memory region (a system
 * shared memory request's input, read where the client wrote it) carries its parts' addresses instead,
 * so the execution thread copies them from the regions and the main thread copies nothing. The
 * mappings are held until `release`, so a region unregistered meanwhile is unmapped only after the run.
 */
export function holdMappedFeeds(feeds: readonly ChannelTensor[]): MappedFeeds {
  let addressed: ChannelTensor[] | undefined;
  for (const [index, feed] of feeds.entries()) {
    if (feed.isString) continue;
    const addresses: number[] = [];
    for (const part of feed.parts) {
      const address = holdMapping(part);
      if (address === undefined) break;
      addresses.push(address);
    }
    if (addresses.length < feed.parts.length) {
      for (let part = 0; part < addresses.length; part++) releaseMapping(feed.parts[part]!);
      continue;
    }
    addressed ??= [...feeds];
    addressed[index] = { ...feed, addresses };
  }
  if (addressed === undefined) return { feeds, ...NOTHING_HELD };
  const held = addressed;
  let isReleased = false;
  return {
    feeds: held,
    release: () => {
      if (isReleased) return;
      isReleased = true;
      for (const feed of held) if (feed.addresses !== undefined) for (const part of feed.parts) releaseMapping(part);
    },
  };
}
