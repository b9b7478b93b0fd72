/** A uniform random number in [0, 1). */
export type Random = () => number;

/**
 * A small seeded generator (mulberry32: 32-bit state, period 2^32), so that `--seed` makes random input
 * data and Poisson arrivals repeatable. Without a seed, one is drawn from Math.random.
 */
export function createRandom(seed: number = Math.floor(Math.random() * 2 ** 32)): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** The gap to the next arrival of a Poisson process of `ratePerSec`: exponentially distributed, mean 1/rate. */
export function exponentialGapMs(random: Random, ratePerSec: number): number {
  return (-Math.log(1 - random()) * 1000) / ratePerSec;
}
