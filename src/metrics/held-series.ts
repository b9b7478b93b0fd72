/** A series' labels: model and version, for the families Nereid makes per model version. */
export type Labels = Readonly<Record<string, string>>;

/**
 * The series of a family that come and go with model versions, by their labels, each counted by its
 * holders: a version being reloaded holds the same labels before the copy it replaces lets go, and the
 * series stays from the first hold until the last release (Triton's MetricModelReporter keeps a
 * version's series for as long as the version is loaded).
 */
export class HeldSeries<T> {
  readonly #entries = new Map<string, { readonly labels: Labels; readonly value: T; holders: number }>();

  /** The value of the series with these labels, made by `make` if it is new; each hold is undone by one `release`. */
  hold(labels: Labels, make: () => T): T {
    const key = JSON.stringify(labels);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { labels: { ...labels }, value: make(), holders: 0 };
      this.#entries.set(key, entry);
    }
    entry.holders++;
    return entry.value;
  }

  /** One holder of the series with these labels is gone; the series leaves with the last. */
  release(labels: Labels): void {
    const key = JSON.stringify(labels);
    const entry = this.#entries.get(key);
    if (entry !== undefined && --entry.holders === 0) this.#entries.delete(key);
  }

  /** Each held series: its labels and its value. */
  values(): IterableIterator<{ readonly labels: Labels; readonly value: T }> {
    return this.#entries.values();
  }
}
