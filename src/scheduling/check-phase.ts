let waiting: Array<() => void> = [];

function release(): void {
  const released = waiting;
  waiting = [];
  for (const resolve of released) resolve();
}

/**
 * Resolves in the event loop's check phase (one shared setImmediate), after the poll phase has read
 * every request that arrived in this turn: the cache answers its hits of one turn together, as the
 * dynamic batcher answers a batch, and an ONNX instance that runs its batches inline starts one there
 * (backends/onnxruntime/ort-instance.ts, `isFedByBatcher`), so that the turn's requests batch behind it.
 *
 * NOTE: answered at once, each hit ran its whole path (parse, key, encode, write) per socket, and cost
 * the main thread more than an executed request (at 64 clients, 161–198 µs against 103–120 for a
 * batched miss, docs/benchmarks.md): each phase done for every request of the turn in a row keeps its
 * code and data warm. Deferred here, the hit cost 151–181 µs of main thread against 184–231 for a miss,
 * in the same runs.
 */
export function untilCheckPhase(): Promise<void> {
  return new Promise((resolve) => {
    if (waiting.push(resolve) === 1) setImmediate(release);
  });
}
