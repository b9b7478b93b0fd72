import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AuthToken } from './auth-token.js';

const missing = {
  status: 'UNAUTHENTICATED',
  message: "this server requires a bearer token: send the header 'Authorization: Bearer <token>'",
  reason: 'BEARER_TOKEN_REJECTED',
  details: { challenge: 'Bearer' },
};
const invalid = { status: 'UNAUTHENTICATED', message: 'invalid bearer token', reason: 'BEARER_TOKEN_REJECTED', details: { challenge: 'Bearer error="invalid_token"' } };

test('the right token passes; a missing, malformed or other one is refused with its challenge', () => {
  const token = new AuthToken('s3cret');
  token.check('Bearer s3cret');
  token.check('bearer s3cret');
  for (const header of [undefined, '', 'Bearer', 'Basic czNjcmV0', 's3cret']) assert.throws(() => token.check(header), missing, String(header));
  for (const header of ['Bearer s3cre', 'Bearer s3cret2', 'Bearer S3CRET']) assert.throws(() => token.check(header), invalid, header);
});

test('the token file: one line, its trailing line break dropped; unreadable or blank files are refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'nereid-token-'));
  writeFileSync(join(dir, 'token'), 'abc123\n');
  (await AuthToken.fromFile(join(dir, 'token'))).check('Bearer abc123');
  writeFileSync(join(dir, 'blank'), '\n');
  await assert.rejects(AuthToken.fromFile(join(dir, 'blank')), {
    status: 'INVALID_ARG',
    message: `--auth-token-file: '${join(dir, 'blank')}' must hold one token on one line, without spaces (e.g. from 'openssl rand -hex 32')`,
  });
  await assert.rejects(AuthToken.fromFile(join(dir, 'none')), {
    status: 'INVALID_ARG',
    message: `--auth-token-file: cannot read '${join(dir, 'none')}': ENOENT: no such file or directory, open '${join(dir, 'none')}'`,
  });
});
