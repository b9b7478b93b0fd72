import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import { DEFAULT_TRACE_SETTINGS } from '../kernel/trace-settings.js';
import { type TraceFlags, parseTraceConfig } from './trace-config.js';

const fail = (message: string): NereidError => new NereidError('INVALID_ARG', message);

test("--trace-config in Triton's syntax: global settings, triton,<setting>, levels that add up", () => {
  assert.deepEqual(
    parseTraceConfig({ config: ['triton,file=/tmp/t.json', 'triton,log-frequency=50', 'rate=100', 'level=TIMESTAMPS', 'level=TENSORS', 'count=100', 'mode=triton'] }, fail),
    { settings: { level: { timestamps: true, tensors: true }, rate: 100, count: 100, logFrequency: 50, file: '/tmp/t.json' }, mode: 'triton', warnings: [] },
  );
  assert.deepEqual(parseTraceConfig({ config: [] }, fail), { settings: DEFAULT_TRACE_SETTINGS, mode: 'triton', warnings: [] });
});

test('the opentelemetry mode: url, repeated resource=KEY=VALUE, the batch span processor settings; no trace file needed', () => {
  assert.deepEqual(
    parseTraceConfig(
      {
        config: [
          'mode=opentelemetry',
          'level=TIMESTAMPS',
          'opentelemetry,url=http://collector:4318/v1/traces',
          'opentelemetry,resource=service.name=triton',
          'opentelemetry,resource=k8s.pod.name=a=b',
          'opentelemetry,bsp_max_queue_size=100',
          'opentelemetry,bsp_schedule_delay=20',
          'opentelemetry,bsp_max_export_batch_size=100',
        ],
      },
      fail,
    ),
    {
      settings: { ...DEFAULT_TRACE_SETTINGS, level: { timestamps: true, tensors: false } },
      mode: 'opentelemetry',
      openTelemetry: {
        url: 'http://collector:4318/v1/traces',
        resource: { 'service.name': 'triton', 'k8s.pod.name': 'a=b' },
        bspMaxQueueSize: 100,
        bspScheduleDelayMs: 20,
        bspMaxExportBatchSize: 100,
      },
      warnings: [],
    },
  );
  assert.deepEqual(parseTraceConfig({ config: ['mode=opentelemetry'] }, fail).openTelemetry, { url: 'http://localhost:4318/v1/traces', resource: {} });
  assert.deepEqual(parseTraceConfig({ config: ['mode=opentelemetry', 'level=TENSORS'] }, fail).warnings, [
    'Tensor level tracing is not supported by the mode: OPENTELEMETRY (the TENSORS level records nothing)',
  ]);
  assert.deepEqual(parseTraceConfig({ config: ['opentelemetry,url=http://c:4318/v1/traces'] }, fail).warnings, [
    'opentelemetry,<setting> is given but the trace mode is triton: add --trace-config mode=opentelemetry',
  ]);
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

test("trace levels and modes in any case, and Triton's older level names (qa/L0_cmdline_trace: --trace-level=MIN, MAX)", () => {
  const levelOf = (flags: Partial<TraceFlags>): unknown => parseTraceConfig({ config: [], ...flags }, fail).settings.level;
  assert.deepEqual(levelOf({ level: ['MIN'] }), { timestamps: true, tensors: false });
  assert.deepEqual(levelOf({ level: ['max'] }), { timestamps: true, tensors: false });
  assert.deepEqual(levelOf({ level: ['True', 'Tensors'] }), { timestamps: true, tensors: true });
  assert.deepEqual(levelOf({ config: ['level=on', 'level=false'] }), { timestamps: false, tensors: false });
  assert.deepEqual(levelOf({ config: ['level=timestamps'] }), { timestamps: true, tensors: false });
  assert.equal(parseTraceConfig({ config: ['mode=OpenTelemetry', 'OPENTELEMETRY,url=http://localhost:4318/v1/traces'] }, fail).mode, 'opentelemetry');
});

test('bad --trace-config entries are refused with the reason', () => {
  const cases: Array<[string, string]> = [
    ['rate', "--trace-config 'rate': expected [<mode>,]<setting>=<value>, e.g. triton,file=/tmp/trace.json or rate=100"],
    ['speed=3', "--trace-config 'speed=3': unknown setting 'speed'; the global settings are level, rate, count, mode"],
    ['triton,rate=3', "--trace-config 'triton,rate=3': unknown setting 'rate'; the triton mode takes file, log-frequency"],
    ['zipkin,url=x', "--trace-config 'zipkin,url=x': unknown trace mode 'zipkin'; expected triton or opentelemetry"],
    ['mode=zipkin', "--trace-config 'mode=zipkin': unknown trace mode 'zipkin'; expected triton or opentelemetry"],
    ['opentelemetry,file=x', "--trace-config 'opentelemetry,file=x': unknown setting 'file'; the opentelemetry mode takes url, resource, bsp_max_queue_size, bsp_schedule_delay, bsp_max_export_batch_size"],
    ['opentelemetry,resource=service.name', "--trace-config 'opentelemetry,resource=service.name': expected opentelemetry,resource=<key>=<value>, e.g. opentelemetry,resource=service.name=triton"],
    ['opentelemetry,bsp_schedule_delay=-1', '--trace-config opentelemetry,bsp_schedule_delay=-1: expected an integer from 0 to 2147483647'],
    ['count=-2', '--trace-config count=-2: expected an integer from -1 to 2147483647'],
    ['level=ALL', 'Bad option: "--trace-config level".\ninvalid value for trace level option: all (expected OFF, TIMESTAMPS or TENSORS)'],
  ];
  for (const [entry, message] of cases) assert.throws(() => parseTraceConfig({ config: ['mode=opentelemetry', entry] }, fail), { message }, entry);
  assert.throws(() => parseTraceConfig({ config: ['mode=opentelemetry', 'opentelemetry,url=localhost:4318'] }, fail), {
    message: '--trace-config opentelemetry,url=localhost:4318: expected the http:// or https:// URL of an OTLP/HTTP receiver, e.g. http://localhost:4318/v1/traces',
  });
  assert.throws(() => parseTraceConfig({ config: ['mode=opentelemetry', 'opentelemetry,bsp_max_export_batch_size=4096'] }, fail), {
    message: '--trace-config opentelemetry,bsp_max_export_batch_size=4096: must be less than or equal to bsp_max_queue_size (2048)',
  });
});
