import type { StepResult } from './profiler.js';
import { type PerfReport, describeSettings, loadHeading, loadValue } from './report.js';

const WIDTH = 880;
const HEIGHT = 520;
const MARGIN = { top: 56, right: 170, bottom: 64, left: 78 };

const SERIES: ReadonlyArray<{ readonly label: string; readonly color: string; readonly pick: (step: StepResult) => number }> = [
  { label: 'p99', color: '#d62728', pick: (step) => step.latencyUs.p99Us },
  { label: 'p95', color: '#ff7f0e', pick: (step) => step.latencyUs.p95Us },
  { label: 'p90', color: '#bcbd22', pick: (step) => step.latencyUs.p90Us },
  { label: 'p50', color: '#1f77b4', pick: (step) => step.latencyUs.p50Us },
  { label: 'average', color: '#2ca02c', pick: (step) => step.latencyUs.averageUs },
];

export function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[char]!);
}

/** Round tick values from 0 to at least `max`: steps of 1, 2 or 5 times a power of ten, about `count` of them. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= raw)!;
  const ticks: number[] = [];
  for (let value = 0; value < max + step - 1e-9 * step; value += step) ticks.push(Number(value.toPrecision(12)));
  return ticks;
}

const formatTick = (value: number): string => (Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6))));

/**
 * The latency-throughput curve of a run as a standalone SVG: throughput (inferences per second) across,
 * latency (ms) up, one line per latency statistic, each point labelled with its concurrency or rate
 * and carrying its figures as a tooltip.
 */
export function renderPlotSvg(report: PerfReport): string {
  const steps = report.steps;
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const xTicks = niceTicks(Math.max(0, ...steps.map((step) => step.throughputInferPerSec)));
  const yTicks = niceTicks(Math.max(0, ...steps.flatMap((step) => SERIES.map((series) => series.pick(step) / 1000))));
  const xMax = xTicks.at(-1)!;
  const yMax = yTicks.at(-1)!;
  const x = (value: number): number => MARGIN.left + (value / xMax) * plotWidth;
  const y = (value: number): number => MARGIN.top + plotHeight - (value / yMax) * plotHeight;
  const f = (value: number): string => value.toFixed(1);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(`nereid perf: latency against throughput, ${describeSettings(report.settings)}`)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${MARGIN.left}" y="24" font-size="15" font-weight="bold">${escapeXml(`Latency against throughput: ${report.settings.modelName}`)}</text>`,
    `<text x="${MARGIN.left}" y="42" fill="#555555">${escapeXml(describeSettings(report.settings))}</text>`,
  );
  for (const tick of xTicks) {
    parts.push(
      `<line x1="${f(x(tick))}" y1="${MARGIN.top}" x2="${f(x(tick))}" y2="${MARGIN.top + plotHeight}" stroke="#eeeeee"/>`,
      `<text x="${f(x(tick))}" y="${MARGIN.top + plotHeight + 18}" text-anchor="middle">${formatTick(tick)}</text>`,
    );
  }
  for (const tick of yTicks) {
    parts.push(
      `<line x1="${MARGIN.left}" y1="${f(y(tick))}" x2="${MARGIN.left + plotWidth}" y2="${f(y(tick))}" stroke="#eeeeee"/>`,
      `<text x="${MARGIN.left - 8}" y="${f(y(tick) + 4)}" text-anchor="end">${formatTick(tick)}</text>`,
    );
  }
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#888888"/>`,
    `<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 18}" text-anchor="middle">throughput (inferences/s)</text>`,
    `<text transform="translate(20 ${MARGIN.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">latency (ms)</text>`,
  );
  for (const [index, series] of SERIES.entries()) {
    const points = steps.map((step) => `${f(x(step.throughputInferPerSec))},${f(y(series.pick(step) / 1000))}`);
    parts.push(`<g fill="${series.color}" stroke="${series.color}">`);
    if (points.length > 1) parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke-width="2"/>`);
    for (const step of steps) {
      const tooltip = `${loadHeading(report.settings.mode).toLowerCase()} ${loadValue(step.load)}: ${step.throughputInferPerSec.toFixed(1)} infer/s, ${series.label} ${(series.pick(step) / 1000).toFixed(2)} ms`;
      parts.push(`<circle cx="${f(x(step.throughputInferPerSec))}" cy="${f(y(series.pick(step) / 1000))}" r="3.5"><title>${escapeXml(tooltip)}</title></circle>`);
    }
    parts.push('</g>');
    const legendY = MARGIN.top + 10 + index * 20;
    parts.push(
      `<line x1="${WIDTH - MARGIN.right + 20}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 44}" y2="${legendY}" stroke="${series.color}" stroke-width="2"/>`,
      `<text x="${WIDTH - MARGIN.right + 50}" y="${legendY + 4}">${series.label} latency</text>`,
    );
  }
  const prefix = report.settings.mode === 'concurrency' ? 'c=' : 'r=';
  for (const step of steps) {
    parts.push(
      `<text x="${f(x(step.throughputInferPerSec) + 6)}" y="${f(y(step.latencyUs.p99Us / 1000) - 6)}" fill="#333333" font-size="11">${prefix}${loadValue(step.load)}</text>`,
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** The curve in a standalone HTML page with the settings and the results table. */
export function renderPlotHtml(report: PerfReport): string {
  const heading = loadHeading(report.settings.mode);
  const ms = (us: number): string => (us / 1000).toFixed(2);
  const rows = report.steps.map(
    (step) =>
      `<tr><td>${loadValue(step.load)}</td><td>${step.throughputInferPerSec.toFixed(1)}</td><td>${ms(step.latencyUs.averageUs)}</td><td>${ms(step.latencyUs.p50Us)}</td>` +
      `<td>${ms(step.latencyUs.p90Us)}</td><td>${ms(step.latencyUs.p95Us)}</td><td>${ms(step.latencyUs.p99Us)}</td><td>${step.serverTimesUs.queueUs.toFixed(0)}</td>` +
      `<td>${(step.serverTimesUs.computeInputUs + step.serverTimesUs.computeInferUs + step.serverTimesUs.computeOutputUs).toFixed(0)}</td><td>${step.isStable ? 'yes' : 'no'}</td></tr>`,
  );
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeXml(`nereid perf: ${report.settings.modelName}`)}</title>
<style>
body { font-family: sans-serif; margin: 24px; color: #222222; }
table { border-collapse: collapse; margin-top: 16px; }
th, td { border: 1px solid #cccccc; padding: 4px 10px; text-align: right; }
th { background: #f4f4f4; }
</style>
</head>
<body>
<h1>${escapeXml(`nereid perf: ${report.settings.modelName}`)}</h1>
<p>${escapeXml(describeSettings(report.settings))}; started ${escapeXml(report.startedAt)}.</p>
${renderPlotSvg(report).trim()}
<table>
<thead><tr><th>${heading}</th><th>infer/s</th><th>avg ms</th><th>p50 ms</th><th>p90 ms</th><th>p95 ms</th><th>p99 ms</th><th>server queue µs</th><th>server compute µs</th><th>stable</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</body>
</html>
`;
}
