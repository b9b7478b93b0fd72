/** A measured point: more throughput and less latency are better. */
export interface ParetoPoint {
  readonly throughput: number;
  readonly latencyUs: number;
}

/**
 * The Pareto front of throughput against latency: the indexes of the points no other point beats on
 * both (at least as much throughput and at most as much latency, one strictly), from the lowest latency
 * up. Of identical points, the first is kept.
 */
export function paretoFront(points: readonly ParetoPoint[]): number[] {
  const order = points
    .map((point, index) => ({ point, index }))
    .sort((a, b) => b.point.throughput - a.point.throughput || a.point.latencyUs - b.point.latencyUs || a.index - b.index);
  const front: number[] = [];
  let lowestLatencyUs = Number.POSITIVE_INFINITY;
  for (const { point, index } of order) {
    if (point.latencyUs < lowestLatencyUs) {
      front.push(index);
      lowestLatencyUs = point.latencyUs;
    }
  }
  return front.reverse();
}
