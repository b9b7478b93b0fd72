import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { NereidError } from '../core/index.js';

/**
 * The bearer token of `--auth-token-file` (beyond Triton, which has none): every API of both front ends
 * asks for `Authorization: Bearer <token>` (RFC 6750 §2.1), over gRPC as `authorization` metadata.
 * NOTE: tokens are compared as SHA-256 digests with crypto.timingSafeEqual, so the time taken tells
 * nothing about the token, not even its length (timingSafeEqual itself needs equal lengths).
 */
export class AuthToken {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = sha256(token);
  }

  /**
   * Reads the token from a file: its content without the line break editors leave at the end.
   * Throws INVALID_ARG when the file cannot be read or holds no token.
   */
  static async fromFile(path: string): Promise<AuthToken> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new NereidError('INVALID_ARG', `--auth-token-file: cannot read '${path}': ${(error as Error).message}`);
    }
    const token = text.replace(/\r?\n$/, '');
    if (token.trim() === '' || /[\s]/.test(token)) {
      throw new NereidError('INVALID_ARG', `--auth-token-file: '${path}' must hold one token on one line, without spaces (e.g. from 'openssl rand -hex 32')`);
    }
    return new AuthToken(token);
  }

  /**
   * Checks an `Authorization` header or metadata value; throws UNAUTHENTICATED, with the challenge
   * of RFC 6750 §3 for WWW-Authenticate, when it is missing or carries another token.
   */
  check(authorization: string | undefined): void {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
    if (presented === undefined) {
      throw new NereidError('UNAUTHENTICATED', "this server requires a bearer token: send the header 'Authorization: Bearer <token>'", {
        reason: 'BEARER_TOKEN_REJECTED',
        details: { challenge: 'Bearer' },
      });
    }
    if (!timingSafeEqual(sha256(presented), this.#digest)) {
      throw new NereidError('UNAUTHENTICATED', 'invalid bearer token', {
        reason: 'BEARER_TOKEN_REJECTED',
        details: { challenge: 'Bearer error="invalid_token"' },
      });
    }
  }
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
