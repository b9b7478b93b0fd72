import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkWellFormedXml } from '../../test/helpers/xml.js';
import type { ServerCounters } from './measurement.js';
import { escapeXml, niceTicks, renderPlotHtml, renderPlotSvg } from './plot.js';
import type { StepResult } from './profiler.js';
import { type PerfReport, reportCsv, reportJson, reportTable } from './report.js';

const server = (success: number): ServerCounters => ({
  successCount: success,
  failCount: 0,
  inferenceCount: success,
  executionCount: success,
  queueCount: success,
  queueNs: success * 10_000,
  computeInputCount: success,
  computeInputNs: success * 20_000,
  computeInferCount: success,
  computeInferNs: success * 300_000,
  computeOutputCount: success,
  computeOutputNs: success * 40_000,
});

const step = (concurrency: number, throughput: number, p50Us: number, isStable = true): StepResult => ({
  load: { mode: 'concurrency', concurrency },
  isStable,
  durationMs: 3000,
  sentCount: throughput * 3,
  requestCount: throughput * 3,
  failedCount: 0,
  throughputInferPerSec: throughput,
  sendRatePerSec: throughput,
  latencyUs: { averageUs: p50Us + 50, minUs: p50Us / 2, maxUs: p50Us * 10, p50Us, p90Us: p50Us * 1.5, p95Us: p50Us * 2, p99Us: p50Us * 3 },
  server: server(throughput * 3),
  serverTimesUs: { queueUs: 10, computeInputUs: 20, computeInferUs: 300, computeOutputUs: 40 },
  overheadUs: p50Us + 50 - 370,
  averageSendLagUs: undefined,
  windows: [],
});

const REPORT: PerfReport = {
  tool: 'nereid perf',
  startedAt: '2026-11-30T10:00:00.000Z',
  settings: {
    modelName: 'a<b&c',
    modelVersion: undefined,
    protocol: 'http',
    url: 'localhost:8000',
    mode: 'concurrency',
    requestDistribution: undefined,
    batchSize: 1,
    measurementIntervalMs: 5000,
    stabilityPercentage: 10,
    maxTrials: 10,
    percentile: undefined,
    isStreaming: false,
    inputData: 'random',
    hasServerStatistics: true,
  },
  steps: [step(1, 1000, 800), step(4, 2500, 1500, false)],
  stopReason: undefined,
  failure: undefined,
};

describe('reports', () => {
  test('CSV: perf_analyzer\'s columns first, microseconds, one row per step', () => {
    assert.equal(
      reportCsv(REPORT),
      'Concurrency,Inferences/Second,Client+Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,' +
        'p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,Requests,Failed Requests,Server Success Count,Send Rate,Stable\n' +
        '1,1000.00,480,10,20,300,40,800,1200,1600,2400,850,3000,0,3000,1000.00,yes\n' +
        '4,2500.00,1180,10,20,300,40,1500,2250,3000,4500,1550,7500,0,7500,2500.00,no\n',
    );
  });

  test('JSON: the whole report, fractions rounded', () => {
    const json = JSON.parse(reportJson({ ...REPORT, steps: [{ ...step(1, 1000, 800), durationMs: 1234.56789 }] })) as PerfReport;
    assert.equal(json.steps[0]!.durationMs, 1234.568);
    assert.equal(json.settings.modelName, 'a<b&c');
  });

  test('the table: aligned columns, a note on unstable steps', () => {
    const table = reportTable(REPORT);
    assert.match(table, /^nereid perf: model 'a<b&c' over http at localhost:8000, batch size 1, random data\n/);
    const lines = table.split('\n');
    const header = lines.find((line) => line.startsWith('Concurrency'))!;
    const rows = lines.filter((line) => /^\s+\d+\s/.test(line));
    assert.equal(rows.length, 2);
    assert.ok(rows.every((row) => row.length === header.length));
    assert.match(rows[0]!, /^\s+1\s+1000\.0\s+0\.85\s+0\.80\s+1\.20\s+1\.60\s+2\.40\s+10\s+20\s+300\s+40\s+480\s+3000\s+yes$/);
    assert.match(table, /\nStable "no": 10 windows did not agree within 10 %; those figures are less certain\.\n$/);
  });

  test('nice ticks: 1, 2 or 5 times a power of ten, covering the maximum', () => {
    assert.deepEqual(niceTicks(2500), [0, 500, 1000, 1500, 2000, 2500]);
    assert.deepEqual(niceTicks(2.7), [0, 1, 2, 3]);
    assert.deepEqual(niceTicks(0.9), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(niceTicks(0), [0, 1]);
  });

  test('SVG: well-formed, names escaped, a line and a point per statistic and step', () => {
    const svg = renderPlotSvg(REPORT);
    const elements = checkWellFormedXml(svg);
    assert.equal(elements[0], 'svg');
    assert.equal(elements.filter((name) => name === 'polyline').length, 5);
    assert.equal(elements.filter((name) => name === 'circle').length, 10);
    assert.ok(svg.includes('Latency against throughput: a&lt;b&amp;c'));
    assert.match(svg, />c=4</);
    assert.equal(escapeXml(`<'&">`), '&lt;&apos;&amp;&quot;&gt;');
  });

  test('HTML: the SVG and the table in one page', () => {
    const html = renderPlotHtml(REPORT);
    assert.match(html, /^<!DOCTYPE html>\n/);
    assert.equal(checkWellFormedXml(/<svg[\s\S]*<\/svg>/.exec(html)![0])[0], 'svg');
    assert.equal((html.match(/<tr><td>/g) ?? []).length, 2);
    assert.ok(html.includes('<title>nereid perf: a&lt;b&amp;c</title>'));
  });
});
