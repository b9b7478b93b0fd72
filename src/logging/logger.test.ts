import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type LoggerOptions, createLogger, escapeLogText } from './logger.js';

const OPTIONS: LoggerOptions = { info: true, warning: true, error: true, verboseLevel: 0, format: 'default' };

/** Runs `body` with process.stderr.write recording what it is given instead of writing it. */
function captureStderr(body: () => void): string[] {
  const written: string[] = [];
  const original = process.stderr.write;
  process.stderr.write = ((chunk: string) => written.push(chunk) > 0) as typeof process.stderr.write;
  try {
    body();
  } finally {
    process.stderr.write = original;
  }
  return written;
}

test('control characters are escaped, so one message is one line', () => {
  assert.equal(escapeLogText('a\nI1130 forged] line\r\tend'), 'a\\nI1130 forged] line\\r\\tend');
  assert.equal(escapeLogText('\u001b[31mred\u007f\u0085\u2028'), '\\u001b[31mred\\u007f\\u0085\\u2028');
  assert.equal(escapeLogText('plain ünïcode 名前'), 'plain ünïcode 名前');
  const file = join(mkdtempSync(join(tmpdir(), 'nereid-logger-')), 'server.log');
  createLogger({ ...OPTIONS, file }).info('server', '[request id: x\nE1130 00:00:00.000000 1 server] forged] infer');
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /^I\d{4} [\d:.]+ \d+ server\] \[request id: x\\nE1130 00:00:00\.000000 1 server\] forged\] infer$/);
});

for (const [what, file] of [
  ['in a missing folder', join(tmpdir(), 'nereid-no-such-folder', 'server.log')],
  ['that is a directory', tmpdir()],
  ['on a full disk (/dev/full)', '/dev/full'],
] as const) {
  test(`a log file ${what} sends the lines to stderr, after saying so once`, () => {
    const logger = createLogger({ ...OPTIONS, file });
    const written = captureStderr(() => {
      logger.info('server', 'first');
      logger.warning('server', 'second');
    });
    assert.equal(written.length, 3);
    assert.match(written[0]!, new RegExp(`^E\\d{4} [\\d:.]+ \\d+ logging\\] cannot write the log file '${file}' \\(.+\\); logging to standard error instead\\n$`));
    assert.match(written[1]!, /^I\d{4} [\d:.]+ \d+ server\] first\n$/);
    assert.match(written[2]!, /^W\d{4} [\d:.]+ \d+ server\] second\n$/);
  });
}

test('naming a log file again tries it again', () => {
  const folder = mkdtempSync(join(tmpdir(), 'nereid-logger-'));
  const logger = createLogger({ ...OPTIONS, file: folder });
  captureStderr(() => logger.info('server', 'lost to stderr'));
  logger.configure({ file: join(folder, 'server.log') });
  logger.info('server', 'back in a file');
  assert.match(readFileSync(join(folder, 'server.log'), 'utf8'), /^I\d{4} [\d:.]+ \d+ server\] back in a file\n$/);
});
