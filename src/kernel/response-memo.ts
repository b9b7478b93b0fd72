import type { Tensor } from './tensor.js';

/** The most encoded forms one response keeps (front end × output format): beyond, a form is not kept. */
const MAX_FORMS = 4;

/**
 * Encoded forms of one cached response, which the front ends keep beside its tensors so that a hit
 * skips encoding the outputs (the HTTP front end's JSON, with or without binary data). A form is
 * keyed by the front end and every choice of the request that shapes the encoding; the front end
 * owns what it stores and must keep it valid for every response the entry answers (only the request
 * id differs between two hits).
 */
export class ResponseMemo {
  readonly #forms = new Map<string, unknown>();

  get(format: string): unknown {
    return this.#forms.get(format);
  }

  set(format: string, encoded: unknown): void {
    if (this.#forms.size < MAX_FORMS || this.#forms.has(format)) this.#forms.set(format, encoded);
  }
}

/*
 * NOTE: as the response parameters (response-parameters.ts), the memo rides on the identity of the
 * outputs array the local cache stores and hands to every hit; the router puts it on the InferResponse.
 */
const MEMOS = new WeakMap<readonly Tensor[], ResponseMemo>();

/** `outputs`, given a memo of encoded forms: they must never change (a cache entry's). */
export function withResponseMemo(outputs: readonly Tensor[]): readonly Tensor[] {
  MEMOS.set(outputs, new ResponseMemo());
  return outputs;
}

/** The memo of these outputs, when they are a cache entry's. */
export function responseMemoOf(outputs: readonly Tensor[]): ResponseMemo | undefined {
  return MEMOS.get(outputs);
}
