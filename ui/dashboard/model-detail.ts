import type { ModelTraffic } from '../../src/frontends/dashboard/dashboard-frame.js';
import type { RepositoryIndexEntryJson } from '../../src/protocol/repository-index.js';
import { api, currentAccess } from './api.js';
import { BarChart, PALETTE, TimeChart } from './charts.js';
import { byId, el, setFacts } from './dom.js';
import { formatCount, formatRate, formatTime, formatUs } from './format.js';
import { type ModelConfigJson, exampleCurl } from './model-config.js';

const HISTORY_LENGTH = 120;

/**
 * The last two minutes of one model version's rates and latency split, kept for every version so a chart
 * fills at once when chosen. An interval with no request has no mean: null, a gap in the chart, not 0 µs.
 */
class History {
  readonly columns: Array<Array<number | null>> = [[], [], [], [], [], [], []];

  push(timeMs: number, traffic: ModelTraffic): void {
    const mean = traffic.meanUs;
    const values = [timeMs, traffic.requestsPerS, traffic.inferencesPerS, mean?.queue ?? null, mean?.computeInput ?? null, mean?.computeInfer ?? null, mean?.computeOutput ?? null];
    values.forEach((value, index) => this.columns[index]!.push(value));
    if (this.columns[0]!.length > HISTORY_LENGTH) for (const column of this.columns) column.shift();
  }
}

interface LogLinesJson {
  readonly is_kept: boolean;
  readonly lines: ReadonlyArray<{ readonly timeMs: number; readonly severity: string; readonly component: string; readonly message: string }>;
}

/** The chosen model version: its numbers, charts, configuration and recent log lines. */
export class ModelDetail {
  readonly #histories = new Map<string, History>();
  readonly #throughput: TimeChart;
  readonly #latency: TimeChart;
  readonly #batches: BarChart;
  #key: string | undefined;
  #shownConfigKey: string | undefined;
  #logsState = '';

  constructor() {
    this.#throughput = new TimeChart(byId('throughput-chart'), {
      series: [
        { label: 'requests/s', color: PALETTE.blue },
        { label: 'inferences/s', color: PALETTE.orange, dash: [6, 3] },
      ],
      leftUnit: '/s',
    });
    this.#latency = new TimeChart(byId('latency-chart'), {
      series: [
        { label: 'queue µs', color: PALETTE.vermillion },
        { label: 'compute input µs', color: PALETTE.sky, dash: [2, 2] },
        { label: 'compute infer µs', color: PALETTE.blue, dash: [8, 3] },
        { label: 'compute output µs', color: PALETTE.green, dash: [4, 2, 1, 2] },
      ],
      leftUnit: 'µs',
    });
    this.#batches = new BarChart(byId('batch-chart'), { label: 'executions', xUnit: 'batch size', yUnit: 'executions' });
  }

  /** Records every version's sample, whichever is shown. */
  record(timeMs: number, traffic: readonly ModelTraffic[]): void {
    for (const entry of traffic) {
      const key = `${entry.name}/${entry.version}`;
      let history = this.#histories.get(key);
      if (history === undefined) this.#histories.set(key, (history = new History()));
      history.push(timeMs, entry);
    }
  }

  show(entry: RepositoryIndexEntryJson, traffic: ModelTraffic | undefined, config: ModelConfigJson | undefined, timeMs: number): void {
    const version = entry.version ?? '';
    const key = `${entry.name}/${version}`;
    const section = byId('model-detail');
    section.hidden = false;
    byId('detail-heading').textContent = version !== '' ? `${entry.name} · version ${version} · ${entry.state}` : `${entry.name} · ${entry.state}`;
    const reason = byId('detail-reason');
    reason.hidden = (entry.reason ?? '') === '';
    reason.textContent = entry.reason !== undefined ? `Why it is ${entry.state}: ${entry.reason}` : '';
    this.#showEmptyState(entry, traffic, config);
    setFacts(byId('detail-facts'), traffic !== undefined ? this.#facts(traffic) : []);
    const history = this.#histories.get(key);
    if (this.#key !== key || history === undefined) {
      const columns = history?.columns ?? [[], [], [], [], [], [], []];
      this.#throughput.replace([columns[0]!, columns[1]!, columns[2]!]);
      this.#latency.replace([columns[0]!, ...columns.slice(3)]);
    } else {
      const last = history.columns.map((column) => column.at(-1) ?? null);
      this.#throughput.push(timeMs, last.slice(1, 3));
      this.#latency.push(timeMs, last.slice(3));
    }
    this.#showBatches(traffic);
    if (config !== undefined && this.#shownConfigKey !== key) {
      this.#shownConfigKey = key;
      byId('detail-config').textContent = JSON.stringify(config, null, 2);
    } else if (config === undefined) {
      this.#shownConfigKey = undefined;
      byId('detail-config').textContent = entry.state === 'READY' ? 'loading…' : `no configuration: the model is ${entry.state}`;
    }
    const logsState = `${key}:${entry.state}:${entry.reason ?? ''}`;
    if (this.#logsState !== logsState) {
      this.#logsState = logsState;
      void this.refreshLogs(entry.name);
    }
    this.#key = key;
  }

  /** Reads the model's recent log lines again. */
  async refreshLogs(name: string): Promise<void> {
    const list = byId('detail-logs');
    try {
      const logs = await api<LogLinesJson>(`/dashboard/logs?model=${encodeURIComponent(name)}`);
      if (logs.lines.length === 0) {
        list.replaceChildren(el('li', { class: 'muted' }, logs.is_kept ? 'No log lines about this model yet.' : 'This server keeps no log lines.'));
        return;
      }
      list.replaceChildren(
        ...logs.lines.map((line) => el('li', { class: `sev-${line.severity}` }, `${line.severity} ${formatTime(line.timeMs)} ${line.component}] ${line.message}`)),
      );
    } catch (error) {
      list.replaceChildren(el('li', { class: 'reason' }, `cannot read the log lines: ${(error as Error).message}`));
    }
  }

  #facts(traffic: ModelTraffic): Array<readonly [string, string, string]> {
    const mean = traffic.meanUs;
    const quantiles = traffic.quantilesUs;
    const failures = traffic.failuresByReason;
    const failureText =
      failures === undefined
        ? formatCount(traffic.failCount)
        : `${formatCount(traffic.failCount)}${traffic.failCount > 0 ? ` (${Object.entries(failures).filter(([, count]) => count > 0).map(([reason, count]) => `${reason} ${count}`).join(', ')})` : ''}`;
    return [
      ['requests-per-s', 'Requests/s', formatRate(traffic.requestsPerS)],
      ['inferences-per-s', 'Inferences/s', formatRate(traffic.inferencesPerS)],
      ['success-count', 'Successful requests', formatCount(traffic.successCount)],
      ['fail-count', 'Failed requests (by reason)', failureText],
      ['inference-count', 'Inferences', formatCount(traffic.inferenceCount)],
      ['execution-count', 'Executions', formatCount(traffic.executionCount)],
      ['latency-mean', 'Mean request latency', formatUs(mean?.request)],
      ['latency-quantiles', 'p50 / p90 / p99 (last minute)', quantiles !== undefined ? [quantiles.p50, quantiles.p90, quantiles.p99].map(formatUs).join(' / ') : 'needs --metrics-config summary_latencies=true'],
      ['queue-mean', 'Queue', formatUs(mean?.queue)],
      ['compute-input-mean', 'Compute input', formatUs(mean?.computeInput)],
      ['compute-infer-mean', 'Compute infer', formatUs(mean?.computeInfer)],
      ['compute-output-mean', 'Compute output', formatUs(mean?.computeOutput)],
      ['busy-instances', 'Busy instances (executing)', formatRate(traffic.busyInstances)],
    ];
  }

  #showBatches(traffic: ModelTraffic | undefined): void {
    const batches = traffic?.batchExecutions ?? [];
    this.#batches.set(
      batches.map((batch) => batch.batchSize),
      batches.map((batch) => batch.count),
    );
    const body = byId<HTMLTableElement>('batch-table').tBodies[0]!;
    const text = batches.map((batch) => `${batch.batchSize}:${batch.count}`).join(',');
    if (body.dataset.shown === text) return;
    body.dataset.shown = text;
    body.replaceChildren(
      ...(batches.length > 0
        ? batches.map((batch) => el('tr', { 'data-batch-size': String(batch.batchSize) }, el('td', {}, String(batch.batchSize)), el('td', {}, formatCount(batch.count))))
        : [el('tr', {}, el('td', { colspan: '2', class: 'muted' }, 'no executions yet'))]),
    );
  }

  #showEmptyState(entry: RepositoryIndexEntryJson, traffic: ModelTraffic | undefined, config: ModelConfigJson | undefined): void {
    const empty = byId('detail-empty');
    const hasTraffic = traffic !== undefined && traffic.successCount + traffic.failCount > 0;
    const state = entry.state !== 'READY' ? 'not-ready' : hasTraffic ? 'traffic' : config !== undefined ? `idle:${config.name}` : 'idle';
    if (empty.dataset.shown === state) return;
    empty.dataset.shown = state;
    empty.hidden = state === 'traffic';
    if (state === 'not-ready') {
      empty.replaceChildren(`This version is ${entry.state}: no traffic to show.`);
      return;
    }
    const curl = config !== undefined ? exampleCurl(config, location.origin, currentAccess().token !== '') : undefined;
    empty.replaceChildren(
      el('strong', {}, 'No traffic yet'),
      curl !== undefined ? ': try' : `: send it a request (see its inputs in the configuration below), e.g. with perf_analyzer -m ${entry.name}`,
      ...(curl !== undefined ? [el('pre', { tabindex: '0' }, curl)] : []),
    );
  }
}
