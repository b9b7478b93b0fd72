import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../logging/logger.js';
import { DEFAULT_TRACE_SETTINGS, parseTraceSettingsUpdate } from '../../kernel/trace-settings.js';
import type { Context, Span } from '@opentelemetry/api';
import type { OpenTelemetryTracer } from './open-telemetry-tracer.js';
import { TraceManager } from './trace-manager.js';

const TIMESTAMPS = { timestamps: true, tensors: false };
const manager = (rate: number, count = -1): TraceManager =>
  new TraceManager({ initial: { ...DEFAULT_TRACE_SETTINGS, level: TIMESTAMPS, rate, count }, logger: silentLogger });
const sampled = (traces: TraceManager, model: string, requests: number): number[] =>
  Array.from({ length: requests }, (_, i) => i + 1).filter(() => traces.sample(model) !== undefined);

test('one request in `rate` is traced, the rate-th first, until `count` traces are collected', () => {
  const traces = manager(3, 2);
  assert.deepEqual(
    Array.from({ length: 10 }, (_, i) => i + 1).filter(() => traces.sample('m') !== undefined),
    [3, 6],
  );
  assert.equal(traces.settings().count, 0, 'the count is what remains');
  assert.equal(manager(1).sample('m') !== undefined, true);
  const off = new TraceManager({ initial: DEFAULT_TRACE_SETTINGS, logger: silentLogger });
  assert.deepEqual(sampled(off, 'm', 5), [], 'level OFF traces nothing');
});

test("a model's overrides take their own sampling; null clears one, and the model follows the server again", () => {
  const traces = manager(1);
  traces.update('a', parseTraceSettingsUpdate({ trace_rate: ['2'], trace_count: ['1'] }));
  assert.equal(sampled(traces, 'a', 6).length, 1);
  assert.equal(sampled(traces, 'b', 3).length, 3, 'other models keep the server settings');
  traces.update('a', parseTraceSettingsUpdate({ trace_rate: null, trace_count: null }));
  assert.deepEqual(traces.settings('a'), traces.settings());
  traces.update(undefined, parseTraceSettingsUpdate({ trace_rate: ['5'] }));
  assert.equal(traces.settings('a').rate, 5);
  traces.update(undefined, parseTraceSettingsUpdate({ trace_rate: null }));
  assert.equal(traces.settings().rate, 1, "null resets the server's setting to its start-up value");
});

test('the settings parser takes Triton’s texts and passes unknown keys and level names over', () => {
  assert.deepEqual(parseTraceSettingsUpdate({ trace_level: ['TENSORS', 'FOO'], other: ['1'] }), { level: { timestamps: false, tensors: true } });
  assert.deepEqual(parseTraceSettingsUpdate({ trace_level: ['FOO'] }), {});
  assert.throws(() => parseTraceSettingsUpdate({ trace_rate: ['1', '2'] }), { message: "Unable to parse 'trace_rate': expected one value, got 2" });
  assert.throws(() => parseTraceSettingsUpdate({ trace_count: ['-3000000000'] }), {
    message: "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: -3000000000",
  });
});

test('traces waiting for shutdown are bounded: past the bound they are dropped, with one warning', async () => {
  const warnings: string[] = [];
  const logger = { ...silentLogger, warning: (_: string, message: string) => void warnings.push(message) };
  const traces = new TraceManager({ initial: { ...DEFAULT_TRACE_SETTINGS, level: TIMESTAMPS, rate: 1 }, logger, maxCollectedBytes: 200 });
  for (let i = 0; i < 5; i++) {
    const trace = traces.sample('m')!;
    trace.setModel('m', 1, `r${i}`);
    trace.timestamp('REQUEST_START', 1n);
    trace.end();
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^1 traces \(\d+ bytes\) wait to be written; further traces are dropped/);
});

test('OpenTelemetry mode: a valid traceparent is traced whatever the rate and count; others follow the rate', () => {
  const started: Array<{ name: string; parent: unknown }> = [];
  const span = { addEvent: () => span, end: () => {} } as unknown as Span;
  const tracer: OpenTelemetryTracer = {
    extract: (carrier) => (carrier.traceparent === 'valid' ? ({ remote: true } as unknown as Context) : undefined),
    startSpan: (name, _ns, parent) => {
      started.push({ name, parent });
      return span;
    },
    contextOf: () => ({}) as Context,
    timeOf: () => [0, 0],
    shutdown: async () => {},
  };
  const traces = new TraceManager({ initial: { ...DEFAULT_TRACE_SETTINGS, level: TIMESTAMPS, rate: 0, count: 1 }, logger: silentLogger, openTelemetry: tracer });
  assert.equal(traces.sample('m'), undefined, 'rate 0 samples nothing by itself');
  assert.equal(traces.sample('m', { traceparent: 'malformed' }), undefined);
  for (let i = 0; i < 3; i++) traces.sample('m', { traceparent: 'valid' })!.end();
  assert.deepEqual(started, Array(3).fill({ name: 'InferRequest', parent: { remote: true } }));
  assert.equal(traces.settings().count, 1, 'propagated traces leave the count alone');
  traces.update(undefined, parseTraceSettingsUpdate({ trace_rate: ['1'] }));
  traces.sample('m')!.end();
  assert.deepEqual(started.at(-1), { name: 'InferRequest', parent: undefined });
  assert.equal(traces.sample('m'), undefined, 'the count is spent');
  traces.update('m', parseTraceSettingsUpdate({ trace_level: ['OFF'] }));
  assert.equal(traces.sample('m', { traceparent: 'valid' }), undefined, 'level OFF traces nothing, propagated or not');
});
