/**
 * The batching benchmark's report: one markdown table per model (rows (a)–(e), columns per
 * concurrency), the engine limit per batch size, and the four targets as ratios within the run.
 */
import type { EngineResult } from './engine-limit.js';
import type { WrkResult } from './wrk.js';

export type ServerKind = 'naive' | 'fastapi' | 'nereid_nobatch' | 'nereid_batch';
export const SERVER_KINDS: readonly ServerKind[] = ['naive', 'fastapi', 'nereid_nobatch', 'nereid_batch'];

const LABELS: Record<ServerKind, string> = {
  naive: '(b) naive node:http, model inline',
  fastapi: '(c) FastAPI + PyTorch',
  nereid_nobatch: '(d) Nereid, no batching',
  nereid_batch: '(e) Nereid, dynamic batching',
};

export interface ModelResult {
  readonly model: string;
  engine?: EngineResult;
  readonly servers: Partial<Record<ServerKind, WrkResult[]>>;
  /** Largest |difference| from PyTorch's output of each server's answer to the sample request. */
  readonly maxDiffs: Partial<Record<ServerKind, number>>;
}

export interface Target {
  readonly name: string;
  readonly value: string;
  readonly goal: string;
  readonly status: 'pass' | 'miss' | 'n/a';
}

const CNN = 'resnet18';
const MLP = 'mlp';
const TARGET_CONCURRENCY = 32;

const rate = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const ms = (value: number): string => (value >= 10 ? value.toFixed(1) : value.toFixed(2));

function at(result: ModelResult | undefined, kind: ServerKind, concurrency: number): WrkResult | undefined {
  return result?.servers[kind]?.find((r) => r.concurrency === concurrency);
}

export function modelTable(result: ModelResult, concurrencies: readonly number[]): string {
  const lines = [
    `| ${result.model} | ${concurrencies.map((c) => `c=${c} infer/s | c=${c} p50 / p99 ms`).join(' | ')} |`,
    `|---|${concurrencies.map(() => '---:|---:').join('|')}|`,
  ];
  if (result.engine !== undefined) {
    const { best } = result.engine;
    const cells = concurrencies.map(() => `${rate(best.inferPerSec)} | —`);
    lines.push(`| (a) engine limit, in-process (batch ${best.batchSize}, ${best.layout}) | ${cells.join(' | ')} |`);
  }
  for (const kind of SERVER_KINDS) {
    const runs = result.servers[kind];
    if (runs === undefined) continue;
    const cells = concurrencies.map((c) => {
      const run = runs.find((r) => r.concurrency === c);
      if (run === undefined) return '— | —';
      const errors = run.errorCount > 0 ? ` (${run.errorCount} errors)` : '';
      return `${rate(run.inferPerSec)}${errors} | ${ms(run.p50Ms)} / ${ms(run.p99Ms)}`;
    });
    lines.push(`| ${LABELS[kind]} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function engineTable(engine: EngineResult): string {
  const sizes = engine.layouts[0]?.points.map((p) => p.batchSize) ?? [];
  const lines = [
    `| ${engine.model}: batch | ${engine.layouts.map((l) => `${l.layout} infer/s | ${l.layout} ms a run`).join(' | ')} |`,
    `|---:|${engine.layouts.map(() => '---:|---:').join('|')}|`,
  ];
  sizes.forEach((size, i) => {
    lines.push(`| ${size} | ${engine.layouts.map((l) => `${rate(l.points[i]!.inferPerSec)} | ${ms(l.points[i]!.runMs)}`).join(' | ')} |`);
  });
  return lines.join('\n');
}

function ratioTarget(name: string, numerator: number | undefined, denominator: number | undefined, goal: number): Target {
  if (numerator === undefined || denominator === undefined || denominator === 0) return { name, value: 'not measured', goal: `≥ ${goal}`, status: 'n/a' };
  const ratio = numerator / denominator;
  return { name, value: `${ratio.toFixed(2)} (${rate(numerator)} / ${rate(denominator)} infer/s)`, goal: `≥ ${goal}`, status: ratio >= goal ? 'pass' : 'miss' };
}

/** The requirement's four targets, from the results of one run. */
export function targets(results: readonly ModelResult[]): Target[] {
  const cnn = results.find((r) => r.model === CNN);
  const mlp = results.find((r) => r.model === MLP);
  const c = TARGET_CONCURRENCY;
  const p50Gaps = (kind: ServerKind): Array<{ model: string; gapMs: number }> =>
    results.flatMap((r) => {
      const nereid = at(r, kind, 1);
      const naive = at(r, 'naive', 1);
      return nereid !== undefined && naive !== undefined ? [{ model: r.model, gapMs: nereid.p50Ms - naive.p50Ms }] : [];
    });
  const gaps = p50Gaps('nereid_batch');
  const gapText = (list: Array<{ model: string; gapMs: number }>): string =>
    list.map((g) => `${g.model} ${g.gapMs >= 0 ? '+' : ''}${g.gapMs.toFixed(3)} ms`).join(', ');
  const unbatchedGaps = p50Gaps('nereid_nobatch');
  return [
    ratioTarget(`${CNN} c=${c}: Nereid with batching / engine limit at its best batch`, at(cnn, 'nereid_batch', c)?.inferPerSec, cnn?.engine?.best.inferPerSec, 0.9),
    ratioTarget(`${MLP} c=${c}: Nereid with batching / Nereid without`, at(mlp, 'nereid_batch', c)?.inferPerSec, at(mlp, 'nereid_nobatch', c)?.inferPerSec, 1.5),
    ratioTarget(`${MLP} c=${c}: Nereid with batching / naive node:http`, at(mlp, 'nereid_batch', c)?.inferPerSec, at(mlp, 'naive', c)?.inferPerSec, 1.3),
    {
      name: 'c=1: p50 of Nereid with batching − p50 of naive node:http, each model',
      value: gaps.length === 0 ? 'not measured' : gapText(gaps) + (unbatchedGaps.length > 0 ? ` (without batching: ${gapText(unbatchedGaps)})` : ''),
      goal: '≤ 0.3 ms',
      status: gaps.length === 0 ? 'n/a' : gaps.every((g) => g.gapMs <= 0.3) ? 'pass' : 'miss',
    },
  ];
}

export function targetTable(list: readonly Target[]): string {
  return ['| target | measured | goal | result |', '|---|---|---|---|', ...list.map((t) => `| ${t.name} | ${t.value} | ${t.goal} | ${t.status} |`)].join('\n');
}
