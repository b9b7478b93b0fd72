import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePerfArgs, perfUsage } from './perf-options.js';

const parse = (...args: string[]) => {
  const options = parsePerfArgs(args);
  assert.notEqual(options, 'help');
  return options as Exclude<typeof options, 'help'>;
};

describe('nereid perf flags', () => {
  test("perf_analyzer's defaults", () => {
    const options = parse('-m', 'simple');
    assert.equal(options.modelName, 'simple');
    assert.equal(options.protocol, 'http');
    assert.equal(options.url, 'localhost:8000');
    assert.equal(options.batchSize, 1);
    assert.deepEqual(options.range, { mode: 'concurrency', start: 1, end: 1, step: 1 });
    assert.deepEqual(options.inputData, { kind: 'random' });
    assert.equal(options.measurementIntervalMs, 5000);
    assert.equal(options.stabilityPercentage, 10);
    assert.equal(options.maxTrials, 10);
    assert.equal(options.percentile, undefined);
    assert.equal(options.isInputBinary, true);
    assert.equal(options.compression, 'none');
    assert.equal(options.jsonFile, undefined);
    assert.equal(parse('-m', 'simple', '-i', 'grpc').url, 'localhost:8001');
  });

  test("--shared-memory and --output-shared-memory-size with perf_analyzer's meaning", () => {
    assert.equal(parse('-m', 'm').sharedMemory, 'none');
    const options = parse('-m', 'm', '--shared-memory', 'system');
    assert.equal(options.sharedMemory, 'system');
    assert.equal(options.outputSharedMemoryBytes, 102_400);
    assert.equal(parse('-m', 'm', '--shared-memory=system', '--output-shared-memory-size=4096').outputSharedMemoryBytes, 4096);
    assert.throws(() => parse('-m', 'm', '--shared-memory', 'cuda'), { message: /--shared-memory cuda needs a GPU/ });
    assert.throws(() => parse('-m', 'm', '--output-shared-memory-size', '10'), { message: /--output-shared-memory-size needs --shared-memory system/ });
  });

  test('ranges: START, START:END, START:END:STEP; rates take fractions', () => {
    assert.deepEqual(parse('-m', 'm', '--concurrency-range', '4').range, { mode: 'concurrency', start: 4, end: 4, step: 1 });
    assert.deepEqual(parse('-m', 'm', '--concurrency-range', '1:8').range, { mode: 'concurrency', start: 1, end: 8, step: 1 });
    assert.deepEqual(parse('-m', 'm', '--concurrency-range=2:16:2').range, { mode: 'concurrency', start: 2, end: 16, step: 2 });
    assert.deepEqual(parse('-m', 'm', '--request-rate-range', '10.5:20:2.5', '--request-distribution', 'poisson').range, {
      mode: 'request-rate',
      start: 10.5,
      end: 20,
      step: 2.5,
      distribution: 'poisson',
    });
    assert.deepEqual(parse('-m', 'm', '--concurrency-range', '1:0:2', '-l', '50').range, { mode: 'concurrency', start: 1, end: 0, step: 2 });
  });

  test('shapes, headers, files, seed', () => {
    const options = parse('-m', 'm', '--shape', 'IMAGE:3,224,224', '--shape', 'x:y:2', '-H', 'Authorization: Bearer t', '-f', 'r.csv', '--plot', 'p.HTML', '--seed', '5', '--input-data', 'd.json');
    assert.deepEqual([...options.shapes], [
      ['IMAGE', [3, 224, 224]],
      ['x:y', [2]],
    ]);
    assert.deepEqual(options.headers, { authorization: 'Bearer t' });
    assert.equal(options.csvFile, 'r.csv');
    assert.equal(options.plotFile, 'p.HTML');
    assert.equal(options.seed, 5);
    assert.deepEqual(options.inputData, { kind: 'file', path: 'd.json' });
  });

  test('--json without a file means stdout', () => {
    assert.equal(parse('-m', 'm', '--json').jsonFile, '-');
    assert.equal(parse('--json', '-m', 'm').jsonFile, '-');
    assert.equal(parse('-m', 'm', '--json', 'out.json').jsonFile, 'out.json');
  });

  test('--help', () => {
    assert.equal(parsePerfArgs(['--help']), 'help');
    assert.match(perfUsage(), /^Usage: nereid perf -m MODEL \[flags\]\n/);
    assert.match(perfUsage(), /\n {6}--concurrency-range START\[:END\[:STEP\]\] +requests kept in flight/);
  });

  test('mistakes are refused with what was expected', () => {
    const cases: Array<[string[], string]> = [
      [[], 'nereid perf: -m MODEL is required (the model to measure)'],
      [['-m', 'm', '--concurency-range', '1'], "nereid perf: unknown flag '--concurency-range'. Did you mean '--concurrency-range'? Run 'nereid perf --help' for the flags."],
      [['-m', 'm', '--concurrency-range', '1', '--request-rate-range', '10'], 'nereid perf: give --concurrency-range or --request-rate-range, not both'],
      [['-m', 'm', '--concurrency-range', '1.5'], "nereid perf: --concurrency-range takes START[:END[:STEP]] with non-negative integers, got '1.5'"],
      [['-m', 'm', '--concurrency-range', '4:2'], "nereid perf: --concurrency-range: END must be at least START (or 0 to sweep until --latency-threshold), got '4:2'"],
      [['-m', 'm', '--concurrency-range', '0'], "nereid perf: --concurrency-range: START must be above 0, got '0'"],
      [['-m', 'm', '--request-rate-range', '10:20:0'], "nereid perf: --request-rate-range: STEP must be above 0, got '10:20:0'"],
      [['-m', 'm', '--concurrency-range', '1:0'], 'nereid perf: an open-ended range (END 0) needs --latency-threshold, which ends the sweep'],
      [['-m', 'm', '-i', 'udp'], "nereid perf: --protocol takes http, grpc, got 'udp'"],
      [['-m', 'm', '-b', '0'], "nereid perf: --batch-size takes an integer from 1 up, got '0'"],
      [['-m', 'm', '--percentile', '100'], "nereid perf: --percentile takes an integer from 1 to 99, got '100'"],
      [['-m', 'm', '--shape', 'INPUT'], "nereid perf: --shape takes NAME:D1,D2,... with non-negative integer dimensions, got 'INPUT'"],
      [['-m', 'm', '--streaming'], 'nereid perf: --streaming needs -i grpc'],
      [['-m', 'm', '-i', 'grpc', '--input-tensor-format', 'json'], 'nereid perf: --input-tensor-format and --output-tensor-format json are for -i http'],
      [['-m', 'm', '-H', 'novalue'], "nereid perf: -H takes 'NAME:VALUE', got 'novalue'"],
      [['-m', 'm', '--plot', 'curve.png'], "nereid perf: --plot writes an .svg or .html file, got 'curve.png'"],
    ];
    for (const [args, message] of cases) assert.throws(() => parsePerfArgs(args), { name: 'PerfUsageError', message }, args.join(' '));
  });

  test("sequence flags with perf_analyzer's defaults and checks", () => {
    assert.deepEqual(parse('-m', 'seq').sequence, { length: 20, lengthVariationPct: 20, idStart: 1, idEnd: undefined, numOfSequences: 4 });
    assert.deepEqual(
      parse('-m', 'seq', '--sequence-length', '32', '--sequence-length-variation', '0', '--sequence-id-range', '100:200', '--num-of-sequences', '8', '--serial-sequences').sequence,
      { length: 32, lengthVariationPct: 0, idStart: 100, idEnd: 200, numOfSequences: 8 },
    );
    assert.equal(parse('-m', 'seq', '--sequence-length', '0').sequence.length, 20);
    assert.throws(() => parse('-m', 'seq', '--sequence-id-range', '5:5'), /--sequence-id-range takes START\[:END\] with 1 <= START < END, got '5:5'/);
    assert.throws(
      () => parse('-m', 'seq', '--sequence-id-range', '1:4', '--concurrency-range', '8'),
      /--sequence-id-range 1:4 holds 3 ids, fewer than the 8 sequences kept live/,
    );
  });
});
