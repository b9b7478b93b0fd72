/**
 * Picks the known name a misspelt one most likely meant, for "did you mean ...?" hints in config errors.
 * Returns undefined when nothing is close enough to be a useful guess.
 *
 * Spelling variants that differ only in case and underscores match first (`maxBatchSize`, `MAX_BATCH_SIZE`
 * → `max_batch_size`); otherwise the smallest edit distance wins, within about a third of the name's length.
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const squashed = squash(name);
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === name) {
      continue;
    }
    const distance = squash(candidate) === squashed ? 0 : editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

function squash(name: string): string {
  return name.replaceAll('_', '').toLowerCase();
}

/** Levenshtein distance, with a swap of two neighbouring characters counted as one edit. */
function editDistance(a: string, b: string): number {
  // Three rows of the dynamic-programming table: two rows back (for swaps), the previous one, the current one.
  let older = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, older[j - 2]! + 1);
      }
      current[j] = value;
    }
    [older, previous, current] = [previous, current, older];
  }
  return previous[b.length]!;
}
