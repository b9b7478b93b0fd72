/**
 * Which models' loads are waiting for which other models (an ensemble for the models its steps run), so
 * that a wait that would close a circle is refused instead of waiting forever.
 *
 *     ens_a ──waits for──▶ ens_b ──waits for──▶ ens_a     refused: ens_b's load waits for ens_a's
 */
export class DependencyGraph {
  /** requester → the models it waits for, each with how many of its waits name it. */
  readonly #waits = new Map<string, Map<string, number>>();

  /** True when `name` waits, directly or through others, for `target` (or is `target`). */
  isWaitingFor(name: string, target: string): boolean {
    const seen = new Set<string>();
    const pending = [name];
    while (pending.length > 0) {
      const current = pending.pop()!;
      if (current === target) return true;
      if (seen.has(current)) continue;
      seen.add(current);
      pending.push(...(this.#waits.get(current)?.keys() ?? []));
    }
    return false;
  }

  /**
   * Records that `requester` waits for `dependency` until the returned function is called. Two waits
   * for the same model (two steps that run it) are both counted; the edge stays until both end.
   */
  addWait(requester: string, dependency: string): () => void {
    const waits = this.#waits.get(requester) ?? new Map<string, number>();
    this.#waits.set(requester, waits);
    waits.set(dependency, (waits.get(dependency) ?? 0) + 1);
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      const count = waits.get(dependency)! - 1;
      if (count > 0) waits.set(dependency, count);
      else waits.delete(dependency);
      if (waits.size === 0 && this.#waits.get(requester) === waits) this.#waits.delete(requester);
    };
  }
}
