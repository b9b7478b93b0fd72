import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import { DEFAULT_TRACE_SETTINGS } from '../kernel/trace-settings.js';
import { parseTraceConfig } from './trace-config.js';

const fail = (message: string): NereidError => new NereidError('INVALID_ARG', message);

test("--trace-config in Triton's syntax: global settings, triton,<setting>, levels that add up", () => {
  assert.deepEqual(
    parseTraceConfig({ config: ['triton,file=/tmp/t.json', 'triton,log-frequency=50', 'rate=100', 'level=TIMESTAMPS', 'level=TENSORS', 'count=100', 'mode=triton'] }, fail),
    { settings: { level: { timestamps: true, tensors: true }, rate: 100, count: 100, logFrequency: 50, file: '/tmp/t.json' }, warnings: [] },
  );
  assert.deepEqual(parseTraceConfig({ config: [] }, fail), { settings: DEFAULT_TRACE_SETTINGS, warnings: [] });
});

test("Triton's deprecated --trace-* flags mean the same, with a warning; --trace-config wins", () => {
  const { settings, warnings } = parseTraceConfig({ config: ['rate=7'], file: '/tmp/t.json', level: ['TIMESTAMPS'], rate: '3' }, fail);
  assert.deepEqual(settings, { ...DEFAULT_TRACE_SETTINGS, level: { timestamps: true, tensors: false }, rate: 7, file: '/tmp/t.json' });
  assert.deepEqual(warnings, [
    '--trace-file is deprecated (as in Triton): use --trace-config triton,file=<value>',
    '--trace-level is deprecated (as in Triton): use --trace-config level=<value>',
    '--trace-rate is deprecated (as in Triton): use --trace-config rate=<value>',
  ]);
  assert.deepEqual(parseTraceConfig({ config: ['level=TIMESTAMPS'] }, fail).warnings, [
    'tracing is on but no trace file is set (--trace-config triton,file=<path>): traces are collected and written nowhere',
  ]);
});

test('bad --trace-config entries are refused with the reason', () => {
  const cases: Array<[string, string]> = [
    ['rate', "--trace-config 'rate': expected [<mode>,]<setting>=<value>, e.g. triton,file=/tmp/trace.json or rate=100"],
    ['speed=3', "--trace-config 'speed=3': unknown setting 'speed'; the global settings are level, rate, count, mode"],
    ['triton,rate=3', "--trace-config 'triton,rate=3': unknown setting 'rate'; the triton mode takes file, log-frequency"],
    ['zipkin,url=x', "--trace-config 'zipkin,url=x': unknown trace mode 'zipkin'; expected triton or opentelemetry"],
    ['mode=opentelemetry', "--trace-config 'mode=opentelemetry': the opentelemetry trace mode is not implemented; Nereid traces in Triton's mode (triton,file=...)"],
    ['count=-2', '--trace-config count=-2: expected an integer from -1 to 2147483647'],
    ['level=ALL', '--trace-config level=ALL: expected OFF, TIMESTAMPS or TENSORS'],
  ];
  for (const [entry, message] of cases) assert.throws(() => parseTraceConfig({ config: [entry] }, fail), { message }, entry);
});
