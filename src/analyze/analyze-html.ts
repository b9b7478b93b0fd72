import { escapeXml, niceTicks } from '../perf/plot.js';
import { defaultOf, operatingStepOf, rankedConfigs, summarize } from './analyze-report.js';
import { describeConstraints, latencyUsAt } from './objective.js';
import { describeRunConfig } from './run-config.js';
import type { AnalyzeResult, ConfigResult } from './run-analyze.js';

const WIDTH = 900;
const HEIGHT = 500;
const MARGIN = { top: 40, right: 220, bottom: 56, left: 78 };
const PLOT_WIDTH = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_HEIGHT = HEIGHT - MARGIN.top - MARGIN.bottom;
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const OTHER_COLOR = '#c8c8c8';
/** Configurations drawn in colour and named in the legends; the others are grey. */
const HIGHLIGHTED_COUNT = 6;
const f = (value: number): string => value.toFixed(1);
const formatTick = (value: number): string => (Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6))));

interface Axis {
  readonly ticks: readonly number[];
  readonly position: (value: number) => number;
  readonly label: string;
}

function frame(id: string, title: string, x: Axis, y: Axis): string[] {
  const parts = [
    `<svg id="${id}" xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${MARGIN.left}" y="24" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  for (const tick of x.ticks) {
    parts.push(
      `<line x1="${f(x.position(tick))}" y1="${MARGIN.top}" x2="${f(x.position(tick))}" y2="${MARGIN.top + PLOT_HEIGHT}" stroke="#eeeeee"/>`,
      `<text x="${f(x.position(tick))}" y="${MARGIN.top + PLOT_HEIGHT + 18}" text-anchor="middle">${formatTick(tick)}</text>`,
    );
  }
  for (const tick of y.ticks) {
    parts.push(
      `<line x1="${MARGIN.left}" y1="${f(y.position(tick))}" x2="${MARGIN.left + PLOT_WIDTH}" y2="${f(y.position(tick))}" stroke="#eeeeee"/>`,
      `<text x="${MARGIN.left - 8}" y="${f(y.position(tick) + 4)}" text-anchor="end">${formatTick(tick)}</text>`,
    );
  }
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${PLOT_WIDTH}" height="${PLOT_HEIGHT}" fill="none" stroke="#888888"/>`,
    `<text x="${MARGIN.left + PLOT_WIDTH / 2}" y="${HEIGHT - 14}" text-anchor="middle">${escapeXml(x.label)}</text>`,
    `<text transform="translate(20 ${MARGIN.top + PLOT_HEIGHT / 2}) rotate(-90)" text-anchor="middle">${escapeXml(y.label)}</text>`,
  );
  return parts;
}

function linearAxis(max: number, label: string, isVertical: boolean): Axis {
  const ticks = niceTicks(max);
  const top = ticks.at(-1)!;
  const position = isVertical ? (value: number) => MARGIN.top + PLOT_HEIGHT - (value / top) * PLOT_HEIGHT : (value: number) => MARGIN.left + (value / top) * PLOT_WIDTH;
  return { ticks, position, label };
}

function legend(entries: ReadonlyArray<{ label: string; color: string; isDashed?: boolean }>): string[] {
  return entries.flatMap((entry, index) => {
    const y = MARGIN.top + 10 + index * 20;
    const x = WIDTH - MARGIN.right + 16;
    return [
      `<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${entry.color}" stroke-width="2"${entry.isDashed === true ? ' stroke-dasharray="5 3"' : ''}/>`,
      `<text x="${x + 30}" y="${y + 4}">${escapeXml(entry.label)}</text>`,
    ];
  });
}

function colorsOf(result: AnalyzeResult): Map<string, string> {
  const highlighted = rankedConfigs(result).filter((config) => config.steps.length > 0).slice(0, HIGHLIGHTED_COUNT);
  const baseline = defaultOf(result);
  if (!highlighted.includes(baseline) && baseline.steps.length > 0) highlighted.push(baseline);
  return new Map(highlighted.map((config, index) => [config.label, PALETTE[index % PALETTE.length]!]));
}

const nameOf = (config: ConfigResult, result: AnalyzeResult): string => `${config.label}${config.isDefault ? ' (default)' : ''}${config.label === result.bestLabel ? ' ★' : ''}`;

/** Latency against throughput, every configuration's sweep as a line, the Pareto front ringed and joined, the budget as a line. */
export function renderFrontSvg(result: AnalyzeResult): string {
  const { criteria } = result;
  const colors = colorsOf(result);
  const steps = result.configs.flatMap((config) => config.steps);
  const latencyMs = (us: number): number => us / 1000;
  const x = linearAxis(Math.max(0, ...steps.map((step) => step.throughputInferPerSec)), 'throughput (inferences/s)', false);
  const highestMs = Math.max(criteria.latencyBudgetMs ?? 0, ...steps.map((step) => latencyMs(latencyUsAt(step, criteria.percentile))));
  // With a budget the axis stops at 3 times it: what lies far beyond it decides nothing, and would squeeze the rest.
  const isCut = criteria.latencyBudgetMs !== undefined && criteria.latencyBudgetMs > 0 && highestMs > criteria.latencyBudgetMs * 3;
  const y = linearAxis(isCut ? criteria.latencyBudgetMs! * 3 : highestMs, `p${criteria.percentile} latency (ms)${isCut ? ', cut at 3× the budget' : ''}`, true);
  const parts = frame('front-plot', `Latency against throughput: ${result.modelName}, every configuration`, x, y);
  parts.push(`<clipPath id="front-plot-area"><rect x="${MARGIN.left}" y="${MARGIN.top}" width="${PLOT_WIDTH}" height="${PLOT_HEIGHT}"/></clipPath>`, '<g clip-path="url(#front-plot-area)">');
  const point = (throughput: number, us: number): string => `${f(x.position(throughput))},${f(y.position(latencyMs(us)))}`;
  const drawOrder = result.configs.filter((config) => config.steps.length > 0).sort((a, b) => Number(colors.has(a.label)) - Number(colors.has(b.label)));
  for (const config of drawOrder) {
    const color = colors.get(config.label) ?? OTHER_COLOR;
    parts.push(`<g class="config" data-config="${escapeXml(config.label)}" fill="${color}" stroke="${color}">`);
    if (config.steps.length > 1) parts.push(`<polyline points="${config.steps.map((step) => point(step.throughputInferPerSec, latencyUsAt(step, criteria.percentile))).join(' ')}" fill="none" stroke-width="${colors.has(config.label) ? 2 : 1}"/>`);
    for (const step of config.steps) {
      const tooltip = `${config.label} at concurrency ${step.concurrency}: ${step.throughputInferPerSec.toFixed(1)} infer/s, p${criteria.percentile} ${(latencyUsAt(step, criteria.percentile) / 1000).toFixed(2)} ms`;
      const [cx, cy] = point(step.throughputInferPerSec, latencyUsAt(step, criteria.percentile)).split(',');
      parts.push(`<circle cx="${cx}" cy="${cy}" r="3"><title>${escapeXml(tooltip)}</title></circle>`);
    }
    parts.push('</g>');
  }
  if (result.front.length > 0) {
    parts.push(`<g class="front" fill="none" stroke="#000000">`);
    parts.push(`<polyline points="${result.front.map((p) => point(p.throughputInferPerSec, p.latencyUs)).join(' ')}" stroke-width="1.5" stroke-dasharray="5 3"/>`);
    for (const p of result.front) {
      const [cx, cy] = point(p.throughputInferPerSec, p.latencyUs).split(',');
      parts.push(`<circle cx="${cx}" cy="${cy}" r="6.5" stroke-width="1.5"><title>${escapeXml(`front: ${p.label} at concurrency ${p.concurrency}`)}</title></circle>`);
    }
    parts.push('</g>');
  }
  const best = result.configs.find((config) => config.label === result.bestLabel);
  const bestStep = best === undefined ? undefined : operatingStepOf(best);
  if (bestStep !== undefined) {
    const [cx, cy] = point(bestStep.throughputInferPerSec, latencyUsAt(bestStep, criteria.percentile)).split(',');
    const isRightSide = Number(cx) > MARGIN.left + PLOT_WIDTH * 0.7;
    parts.push(
      `<text x="${f(Number(cx) + (isRightSide ? -9 : 9))}" y="${f(Number(cy) - 9)}" text-anchor="${isRightSide ? 'end' : 'start'}" font-size="16" fill="#000000">★ ${escapeXml(best!.label)}</text>`,
    );
  }
  parts.push('</g>');
  const entries: Array<{ label: string; color: string; isDashed?: boolean }> = [...colors].map(([label, color]) => ({ label: nameOf(result.configs.find((config) => config.label === label)!, result), color }));
  if (colors.size < result.configs.length) entries.push({ label: 'other configurations', color: OTHER_COLOR });
  entries.push({ label: 'Pareto front', color: '#000000', isDashed: true });
  if (criteria.latencyBudgetMs !== undefined) {
    const budgetY = f(y.position(criteria.latencyBudgetMs));
    parts.push(`<line class="budget" x1="${MARGIN.left}" y1="${budgetY}" x2="${MARGIN.left + PLOT_WIDTH}" y2="${budgetY}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="2 3"/>`);
    entries.push({ label: `budget p${criteria.percentile} ≤ ${criteria.latencyBudgetMs} ms`, color: '#d62728', isDashed: true });
  }
  parts.push(...legend(entries), '</svg>');
  return parts.join('\n');
}

/** Throughput against concurrency (doubling, so spaced by its logarithm) for the highlighted configurations. */
export function renderConcurrencySvg(result: AnalyzeResult): string {
  const colors = colorsOf(result);
  const shown = result.configs.filter((config) => colors.has(config.label));
  const levels = [...new Set(shown.flatMap((config) => config.steps.map((step) => step.concurrency)))].sort((a, b) => a - b);
  const maxLevel = Math.max(2, ...levels);
  const x: Axis = {
    ticks: levels,
    position: (value) => MARGIN.left + 20 + (Math.log2(value) / Math.log2(maxLevel)) * (PLOT_WIDTH - 40),
    label: 'concurrency (requests in flight)',
  };
  const y = linearAxis(Math.max(0, ...shown.flatMap((config) => config.steps.map((step) => step.throughputInferPerSec))), 'throughput (inferences/s)', true);
  const parts = frame('concurrency-plot', `Throughput against concurrency: the top configurations`, x, y);
  for (const config of shown) {
    const color = colors.get(config.label)!;
    const points = config.steps.map((step) => `${f(x.position(step.concurrency))},${f(y.position(step.throughputInferPerSec))}`);
    parts.push(`<g class="config" data-config="${escapeXml(config.label)}" fill="${color}" stroke="${color}">`);
    if (points.length > 1) parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke-width="2"/>`);
    for (const [index, step] of config.steps.entries()) {
      const [cx, cy] = points[index]!.split(',');
      parts.push(`<circle cx="${cx}" cy="${cy}" r="3.5"><title>${escapeXml(`${config.label} at concurrency ${step.concurrency}: ${step.throughputInferPerSec.toFixed(1)} infer/s`)}</title></circle>`);
    }
    parts.push('</g>');
  }
  parts.push(...legend(shown.map((config) => ({ label: nameOf(config, result), color: colors.get(config.label)! }))), '</svg>');
  return parts.join('\n');
}

/** The report page: the summary, both plots, the table of configurations and the best config.pbtxt. */
export function renderAnalyzeHtml(result: AnalyzeResult, bestPbtxt: string | undefined): string {
  const { criteria } = result;
  const p = `p${criteria.percentile}`;
  const rows = rankedConfigs(result).map((config) => {
    const step = operatingStepOf(config);
    const cells = [
      escapeXml(nameOf(config, result)),
      escapeXml(describeRunConfig(config.runConfig)),
      step === undefined ? '-' : String(step.concurrency),
      step === undefined ? '-' : step.throughputInferPerSec.toFixed(1),
      step === undefined ? '-' : (latencyUsAt(step, criteria.percentile) / 1000).toFixed(2),
      escapeXml(config.failure ?? config.stopReason ?? ''),
    ];
    return `<tr${config.label === result.bestLabel ? ' class="best"' : ''}>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
  });
  const constraints = describeConstraints(criteria);
  const title = `nereid analyze: ${result.modelName}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeXml(title)}</title>
<style>
body { font-family: sans-serif; margin: 24px; color: #222222; max-width: 960px; }
.summary { font-size: 18px; background: #f3f7fb; border-left: 4px solid #1f77b4; padding: 10px 14px; }
table { border-collapse: collapse; margin: 16px 0; }
th, td { border: 1px solid #cccccc; padding: 4px 10px; text-align: left; }
th { background: #f4f4f4; }
tr.best td { background: #fff6d5; font-weight: bold; }
pre { background: #f7f7f7; padding: 12px; border: 1px solid #dddddd; overflow-x: auto; }
svg { display: block; margin: 16px 0; }
</style>
</head>
<body>
<h1>${escapeXml(title)}</h1>
<p class="summary" id="summary">${escapeXml(summarize(result))}</p>
<p>${result.configs.length} configurations measured (${result.searchMode} search) at ${escapeXml(result.url)}, started ${escapeXml(result.startedAt)}. Objective: ${criteria.objective === 'throughput' ? 'the most throughput' : `the lowest ${p} latency`}${constraints === '' ? '' : `, with ${escapeXml(constraints)}`}.${result.batchingNote === undefined ? '' : ` ${escapeXml(result.batchingNote)}.`}</p>
${renderFrontSvg(result)}
${renderConcurrencySvg(result)}
<table id="configs">
<thead><tr><th>config</th><th>in words</th><th>concurrency</th><th>infer/s</th><th>${p} ms</th><th>note</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
${bestPbtxt === undefined ? '' : `<h2>The best configuration: config.pbtxt</h2>\n<pre id="best-config">${escapeXml(bestPbtxt)}</pre>`}
</body>
</html>
`;
}
