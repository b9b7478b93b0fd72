import uPlot from 'uplot';

/** Okabe–Ito colours (as style.css), with dashes so that no series is told apart by colour alone. */
export const PALETTE = {
  blue: '#0072b2',
  orange: '#e69f00',
  green: '#009e73',
  vermillion: '#d55e00',
  purple: '#cc79a7',
  sky: '#56b4e9',
} as const;

export interface SeriesSpec {
  readonly label: string;
  readonly color: string;
  readonly dash?: number[];
  /** A second y axis on the right, for a series in other units. */
  readonly isRightAxis?: boolean;
}

const HEIGHT_PX = 200;

function sizeOf(element: HTMLElement): { width: number; height: number } {
  return { width: Math.max(240, element.clientWidth), height: HEIGHT_PX };
}

/** Keeps a chart as wide as its box. */
function followWidth(chart: uPlot, element: HTMLElement): void {
  new ResizeObserver(() => chart.setSize(sizeOf(element))).observe(element);
}

/** A line chart of the last `capacity` samples over time; the legend shows the values in text. */
export class TimeChart {
  readonly #chart: uPlot;
  readonly #data: Array<Array<number | null>>;
  readonly #capacity: number;

  constructor(element: HTMLElement, options: { readonly series: readonly SeriesSpec[]; readonly leftUnit: string; readonly rightUnit?: string; readonly capacity?: number }) {
    this.#capacity = options.capacity ?? 120;
    this.#data = [[], ...options.series.map(() => [])];
    const axisLabel = (unit: string): uPlot.Axis['values'] => (_chart, ticks) => ticks.map((tick) => `${+tick.toFixed(2)} ${unit}`);
    this.#chart = new uPlot(
      {
        ...sizeOf(element),
        scales: { x: { time: true }, y: { range: (_chart, _min, max) => [0, Math.max(1, max) * 1.1] }, right: { range: (_chart, _min, max) => [0, Math.max(1, max) * 1.1] } },
        axes: [
          {},
          { scale: 'y', values: axisLabel(options.leftUnit), size: 70 },
          ...(options.rightUnit !== undefined ? [{ scale: 'right', side: 1 as const, values: axisLabel(options.rightUnit), size: 80, grid: { show: false } }] : []),
        ],
        series: [
          { label: 'time' },
          ...options.series.map((spec) => ({
            label: spec.label,
            stroke: spec.color,
            width: 2,
            scale: spec.isRightAxis === true ? 'right' : 'y',
            ...(spec.dash !== undefined ? { dash: spec.dash } : {}),
          })),
        ],
      },
      this.#data as uPlot.AlignedData,
      element,
    );
    followWidth(this.#chart, element);
  }

  /** Adds one sample: the time in ms since the epoch and one value per series (null: none, a gap). */
  push(timeMs: number, values: ReadonlyArray<number | null>): void {
    this.#data[0]!.push(timeMs / 1000);
    values.forEach((value, index) => this.#data[index + 1]!.push(value));
    if (this.#data[0]!.length > this.#capacity) for (const column of this.#data) column.shift();
    this.#chart.setData(this.#data as uPlot.AlignedData);
  }

  /** Replaces every sample (another model was chosen). */
  replace(columns: ReadonlyArray<ReadonlyArray<number | null>>): void {
    columns.forEach((column, index) => {
      this.#data[index] = index === 0 ? column.map((ms) => (ms ?? 0) / 1000) : [...column];
    });
    this.#chart.setData(this.#data as uPlot.AlignedData);
  }
}

/** Bars: executions by batch size. */
export class BarChart {
  readonly #chart: uPlot;

  constructor(element: HTMLElement, options: { readonly label: string; readonly xUnit: string; readonly yUnit: string }) {
    this.#chart = new uPlot(
      {
        ...sizeOf(element),
        scales: { x: { time: false, distr: 2 }, y: { range: (_chart, _min, max) => [0, Math.max(1, max) * 1.1] } },
        axes: [
          { label: options.xUnit, values: (_chart, ticks) => ticks.map((tick) => (tick === undefined || tick === null ? '' : String(tick))) },
          { label: options.yUnit, size: 60 },
        ],
        series: [
          { label: options.xUnit },
          { label: options.label, stroke: PALETTE.blue, fill: `${PALETTE.blue}cc`, width: 1, paths: uPlot.paths.bars!({ size: [0.6, 48] }), points: { show: false } },
        ],
        legend: { show: true },
      },
      [[], []],
      element,
    );
    followWidth(this.#chart, element);
  }

  set(xs: readonly number[], ys: readonly number[]): void {
    this.#chart.setData([[...xs], [...ys]]);
  }
}
