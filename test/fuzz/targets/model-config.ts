import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { modelConfigFromJson } from '../../../src/config/model-config-json.js';
import { normalizeModelConfig } from '../../../src/config/normalize.js';
import { parseModelConfig } from '../../../src/config/parse-model-config.js';
import { refuseUnsupportedFields } from '../../../src/config/supported-fields.js';
import { validateModelConfig } from '../../../src/config/validate.js';
import type { ModelConfig } from '../../../src/protocol/gen/model_config_pb.js';
import { anyString, jsonMutation, jsonText, jsonValue, mutateJson } from '../arbitraries.js';
import { type FuzzTarget, assertAcceptedError, expectClientError } from '../fuzz-target.js';

const CORPUS_DIR = fileURLToPath(new URL('../../fixtures/triton-configs/', import.meta.url));
const FILE = 'models/m/config.pbtxt';
/** A config error names the file, line and column: `models/m/config.pbtxt:3:17: ...`. */
const LOCATED = /^models\/m\/config\.pbtxt:\d+:\d+: \S/;

let corpus: { readonly texts: readonly string[]; readonly json: readonly unknown[] } | undefined;

/** Triton's 419 configurations (test/fixtures/triton-configs), as text and as proto3 JSON; read once. */
export function readCorpus(): { readonly texts: readonly string[]; readonly json: readonly unknown[] } {
  corpus ??= {
    texts: readdirSync(join(CORPUS_DIR, 'configs'))
      .sort()
      .map((name) => readFileSync(join(CORPUS_DIR, 'configs', name), 'utf8')),
    json: Object.values(JSON.parse(readFileSync(join(CORPUS_DIR, 'expected.json'), 'utf8')) as Record<string, unknown>),
  };
  return corpus;
}

/** Text-format tokens: strings, names and numbers, punctuation, comments and runs of white space. */
const TOKEN = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*|[A-Za-z0-9_.+-]+|\s+|./g;

interface TokenMutation {
  readonly kind: 'delete' | 'duplicate' | 'swap' | 'replace';
  readonly at: number;
  readonly other: number;
  readonly text: string;
}

const tokenMutation: fc.Arbitrary<TokenMutation> = fc.record({
  kind: fc.constantFrom('delete', 'duplicate', 'swap', 'replace'),
  at: fc.nat(),
  other: fc.nat(),
  text: fc.oneof(fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '-1', '0x7fffffff', '1e999', 'input', 'dims', 'TYPE_FP32', 'max_batch_size', '<', ';'), anyString),
});

function mutateTokens(text: string, mutations: readonly TokenMutation[]): string {
  const tokens = text.match(TOKEN) ?? [];
  for (const { kind, at, other, text: replacement } of mutations) {
    if (tokens.length === 0) break;
    const i = at % tokens.length;
    const j = other % tokens.length;
    if (kind === 'delete') tokens.splice(i, 1);
    else if (kind === 'duplicate') tokens.splice(i, 0, tokens[i]!);
    else if (kind === 'swap') [tokens[i], tokens[j]] = [tokens[j]!, tokens[i]!];
    else tokens[i] = replacement;
  }
  return tokens.join('');
}

/** What the server does with a config after reading it: normalise, validate, refuse unimplemented fields. */
function checkConfig(config: ModelConfig, file: string): void {
  const normalized = normalizeModelConfig(config, { modelName: config.name === '' ? 'm' : config.name });
  validateModelConfig(normalized, { file, isKnownBackend: () => true, isKnownPlatform: () => true });
  refuseUnsupportedFields(normalized);
}

/** Parses config.pbtxt text: a config, or INVALID_ARG naming file, line and column; then the rest of the pipeline. */
function parseText(text: string): void {
  let config: ModelConfig;
  try {
    config = parseModelConfig(text, FILE);
  } catch (error) {
    assertAcceptedError(error, ['INVALID_ARG']);
    assert.match((error as Error).message, LOCATED);
    return;
  }
  expectClientError(() => checkConfig(config, FILE));
}

const corpusIndex = fc.nat();

export const modelConfigTargets: readonly FuzzTarget[] = [
  {
    parser: 'config.pbtxt (parse-model-config.ts, the text-format parser)',
    name: 'arbitrary text: a config, or INVALID_ARG with file:line:column',
    property: () => fc.property(fc.oneof(anyString, fc.string({ unit: 'binary-ascii', maxLength: 60 })), parseText),
  },
  {
    parser: 'config.pbtxt (parse-model-config.ts, the text-format parser)',
    name: "Triton's 419 configs with tokens deleted, duplicated, swapped or replaced: a config, or INVALID_ARG with file:line:column",
    property: () =>
      fc.property(corpusIndex, fc.array(tokenMutation, { minLength: 1, maxLength: 4 }), (index, mutations) => {
        const { texts } = readCorpus();
        parseText(mutateTokens(texts[index % texts.length]!, mutations));
      }),
  },
  {
    parser: "load API override config (model-config-json.ts)",
    name: 'arbitrary JSON text and values: a config or INVALID_ARG',
    property: () =>
      fc.property(fc.oneof(jsonValue.map(jsonText), anyString), (text) => {
        const config = expectClientError(() => modelConfigFromJson(text, 'load request config'));
        if (config !== undefined) expectClientError(() => checkConfig(config, 'load request config'));
      }),
  },
  {
    parser: "load API override config (model-config-json.ts)",
    name: "Triton's 419 configs as JSON with fields removed, replaced, wrapped or added: a config or INVALID_ARG",
    property: () =>
      fc.property(corpusIndex, fc.array(jsonMutation, { minLength: 1, maxLength: 3 }), (index, mutations) => {
        const { json } = readCorpus();
        const mutated = mutations.reduce<unknown>(mutateJson, json[index % json.length]);
        const config = expectClientError(() => modelConfigFromJson(jsonText(mutated), 'load request config'));
        if (config !== undefined) expectClientError(() => checkConfig(config, 'load request config'));
      }),
  },
];
